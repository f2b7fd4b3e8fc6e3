"""Scales and thresholds in the workflow: they reach the metrics rule through params only."""

import pandas as pd
import pytest
import yaml
from helpers import job_counts, make_study, snakemake

# A second B set with five themes, so that every set has a within-set spread (z defined).
LLM5 = """id,name,description
M1,Work and caring,Shifts fitted around looking after a parent
M2,Costs of care,Care bills strain the household budget
M3,Sleep and health,Carers lose sleep and neglect their health
M4,Guilt and patience,Feeling guilty about respite
M5,Gardening,Tending plants in the afternoon
"""
TARGETS = ["results/metrics/minilm/comparisons.csv", "results/metrics/tfidf/comparisons.csv"]


def set_methods(root, **changes):
    path = root / "config" / "config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["theme_sets"] = [{"path": "data/human.csv"}, {"path": "data/llm5.csv"}]
    cfg.pop("run_groups", None)  # one set besides the reference: no runs
    cfg["methods"] = {
        "minilm": {"kind": "sentence_transformer"},  # built-in threshold 0.56
        "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
    }
    for name, spec in changes.items():
        cfg["methods"][name] |= spec
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = make_study(tmp_path_factory.mktemp("thresholds"))
    (root / "data" / "llm5.csv").write_text(LLM5)
    set_methods(root)
    snakemake(root, "--cores", "2", *TARGETS)
    return root


def test_scale_and_thresholds_rerun_only_the_metrics(study):
    set_methods(study, minilm={"scale": "z"}, tfidf={"scale": "z", "thresholds": [1.5, 2.5]})
    counts = job_counts(snakemake(study, "-n", "--cores", "2", *TARGETS).stdout)
    assert counts == {"metrics": 2}, counts
    set_methods(study)


def test_z_scale_tables(study):
    set_methods(study, minilm={"scale": "z"})
    snakemake(study, "--cores", "2", *TARGETS)
    comp = pd.read_csv(study / "results/metrics/minilm/comparisons.csv")
    r = comp.iloc[0]
    assert r["threshold"] == 2.0 and r["scale_flag"] != r["scale_flag"]  # NaN: no flag
    assert 0 <= r["hungarian_f1"] <= 1 and r["hungarian_f1_ci_low"] <= r["hungarian_f1"]
    dec = pd.read_csv(study / "results/metrics/minilm/decision_changes.csv")
    d = dec.iloc[0]
    assert (d["raw_threshold"], d["z_threshold"]) == (0.56, 2.0)  # minilm's built-in default
    assert d["n_both"] + d["n_only_raw"] == d["n_raw"]
    assert d["n_both"] + d["n_only_z"] == d["n_z"]
    # A cosine method's table compares its threshold with metrics.baseline_z.
    dec = pd.read_csv(study / "results/metrics/tfidf/decision_changes.csv")
    assert (dec.loc[0, "raw_threshold"], dec.loc[0, "z_threshold"]) == (0.2, 2.0)
    # The heatmap is drawn on the z scale (its outlines are the z decisions) and says so.
    heat = "results/plots/minilm/human__vs__llm5_heatmap.svg"
    snakemake(study, "--cores", "2", heat)
    svg = (study / heat).read_text()
    assert "within-set z" in svg and "similarity S" not in svg
    set_methods(study)


def test_grounding_decides_on_the_z_scale(study):
    """A z-scale method's grounding applies its threshold 2 to z, as comparisons.csv does."""
    set_methods(study, minilm={"scale": "z"})
    grounding = "results/metrics/minilm/grounding.csv"
    snakemake(study, "--cores", "2", grounding, TARGETS[0])
    g = pd.read_csv(study / grounding).iloc[0]
    assert g["scale"] == "z" and g["text_threshold"] == 2.0
    assert g["scale_flag"] != g["scale_flag"]  # NaN: z defined for every theme
    comp = pd.read_csv(study / TARGETS[0]).iloc[0]
    assert comp["threshold"] == 2.0
    assert g["text_hungarian_f1"] == comp["hungarian_f1"]
    # A raw cosine of at most 1 never reaches 2: the pairs kept are z decisions.
    long = pd.read_parquet(study / "results/metrics/minilm/grounding/human__vs__llm5.parquet")
    assert (long.loc[long["text_pair"], "similarity"] >= 2.0).all()
    assert g["text_pairs"] == long["text_pair"].sum() > 0
    set_methods(study)


RATED = """text_a,text_b,label
Caring while working: fitting shifts around a parent,Work and caring: shifts around a parent,1
Money worries: costs strain the budget,Costs of care: care bills strain the household budget,1
Own health suffers: carers lose sleep,Sleep and health: carers lose sleep and neglect health,1
Guilt: feeling guilty about respite,Guilt and patience: feeling guilty about respite,1
Money worries: costs strain the budget,Gardening: tending plants in the afternoon,0
Guilt: feeling guilty about respite,Work and caring: shifts fitted around a parent,0
Caring while working: fitting shifts around a parent,Gardening: tending plants,0
Own health suffers: carers lose sleep,Costs of care: bills strain the budget,0
"""


def test_calibrated_thresholds_and_scale(study):
    (study / "data" / "rated.csv").write_text(RATED)
    path = study / "config" / "config.yaml"
    set_methods(
        study,
        minilm={"thresholds": ["calibrated", 0.5]},
        tfidf={"scale": "calibrated", "thresholds": [0.5]},
    )
    cfg = yaml.safe_load(path.read_text())
    cfg["calibration"] = {"pairs": "data/rated.csv", "bootstrap": {"n": 50, "seed": 0}}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    counts = job_counts(snakemake(study, "-n", "--cores", "2", *TARGETS).stdout)
    # minilm's embedding job now reads the rated pairs (it puts their vectors in the cache);
    # tfidf embeds nothing, so its similarity does not rerun.
    assert counts["embed"] == 1 and counts["calibration"] == 2, counts
    assert counts["metrics"] == 2 and "similarity_tfidf" not in counts, counts
    snakemake(study, "--cores", "2", *TARGETS)
    # The calibration job found every rated text in the cache: no second model load.
    assert ": 0 encoded, " in (study / "logs/calibration/minilm.log").read_text()
    # An edit of the rated pairs reruns calibration alone (ancient input of embed).
    (study / "data" / "rated.csv").write_text(RATED.replace("in the afternoon", "at dusk"))
    counts = job_counts(snakemake(study, "-n", "--cores", "2", *TARGETS).stdout)
    assert counts == {"calibration": 2, "metrics": 2}, counts
    snakemake(study, "--cores", "2", *TARGETS)
    cal = pd.read_csv(study / "results/calibration/minilm.csv").iloc[0]
    assert cal["n_pairs"] == 8 and cal["auc"] > 0.8
    assert cal["auc_ci_low"] <= cal["auc"] <= cal["auc_ci_high"]
    assert (study / "results/calibration/minilm/calibration.png").stat().st_size > 10_000
    comp = pd.read_csv(study / "results/metrics/minilm/comparisons.csv")
    assert comp["threshold"].tolist()[:2] == [cal["f1_threshold"], 0.5]
    assert comp["threshold_source"].tolist()[:2] == ["calibrated (F1-max)", "config"]
    # Resolved once, in thresholds.csv, which the plots, grounding and report read.
    t = pd.read_csv(study / "results/metrics/minilm/thresholds.csv")
    assert t["threshold"].tolist() == [cal["f1_threshold"], 0.5]
    assert t["source"].tolist() == comp["threshold_source"].tolist()[:2]
    assert set(t["scale"]) == {"cosine"}
    t = pd.read_csv(study / "results/metrics/tfidf/thresholds.csv")
    assert t[["threshold", "scale", "source"]].values.tolist() == [[0.5, "calibrated", "config"]]
    # scale: calibrated: every score is a P(match) from the isotonic fit.
    fit = pd.read_csv(study / "results/calibration/tfidf/isotonic.csv")
    comp = pd.read_csv(study / "results/metrics/tfidf/comparisons.csv")
    lo, hi = fit["p_match"].min(), fit["p_match"].max()
    for col in ("bidir_max_sim_a", "bidir_max_sim_b", "matched_sim_max"):
        assert lo <= comp.loc[0, col] <= hi, col
    heat = "results/plots/tfidf/human__vs__llm5_heatmap.svg"
    snakemake(study, "--cores", "2", heat)
    assert "P(match) (calibrated scale)" in (study / heat).read_text()
    set_methods(study)


def test_every_comparison_flagged_under_z(tmp_path):
    """A two-theme B set has no within-set spread: its only comparison is flagged, themes.csv
    keeps its header with no rows, and the distribution plots say "no comparisons"."""
    root = make_study(tmp_path)
    set_methods(root, minilm={"scale": "z"})
    path = root / "config" / "config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["theme_sets"] = [{"path": "data/human.csv"}, {"path": "data/llm2.json"}]
    del cfg["methods"]["tfidf"]
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    plots = ["results/plots/minilm/distributions.png", "results/plots/minilm/confidence.png"]
    snakemake(root, "--cores", "2", *plots)
    comp = pd.read_csv(root / "results/metrics/minilm/comparisons.csv")
    assert comp["scale_flag"].notna().all() and comp["hungarian_f1"].isna().all()  # not scored
    assert comp["n_b"].tolist() == [2]  # the set sizes are kept
    themes = pd.read_csv(root / "results/metrics/minilm/themes.csv")
    assert themes.empty and {"set_a", "side", "category", "category_threshold"} <= set(themes)
    assert all((root / p).stat().st_size > 0 for p in plots)
