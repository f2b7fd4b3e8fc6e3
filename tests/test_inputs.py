"""themesim.inputs: what each rule reads and writes, per stage and method, from themesim.paths."""

import re
from pathlib import Path

import pytest
from helpers import REPO, make_study, write_config

from themesim.config import prepare
from themesim.inputs import (
    Report,
    Setup,
    methods,
    outputs,
    plots,
    similarity,
    summary,
)
from themesim.report.figures import METHOD_FIGURES

METHODS = {
    "minilm": {"kind": "sentence_transformer", "thresholds": [0.5]},
    "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
    "tf_one": {"kind": "tfidf", "thresholds": [0.2], "comparisons": ["human vs llm2"]},
    "judge": {"kind": "precomputed", "dir": "data/judge", "thresholds": [0.5]},
}


def setup_of(root: Path, **config) -> Setup:
    import yaml

    cfg = yaml.safe_load((root / "config" / "config.yaml").read_text()) | config
    return Setup(prepare(cfg), cfg)


@pytest.fixture
def study(tmp_path, monkeypatch):
    root = make_study(tmp_path)
    write_config(root, [0.5], methods=METHODS)
    # the precomputed method's matrix of llm vs llm2 (comparisons.all_pairs)
    (root / "data" / "judge" / "llm__vs__llm2.csv").write_text(
        ",Work and care,Costs\n"
        "Employment and caregiving conflict,0.8,0.1\n"
        "Financial strain,0.1,0.9\n"
        "Gardening as escape,0.0,0.0\n"
    )
    monkeypatch.chdir(root)  # the config's paths are relative to the run folder
    return root


def test_a_restricted_method_asks_for_the_heatmaps_of_its_pairs_only(study):
    """One plain heatmap rule keyed by {method} and {pair}: a method's consumers ask for its
    own reference pairs, and {pair} matches a reference pair only, never a path in
    pair_heatmaps' folder (comparisons.all_pairs)."""
    setup = setup_of(study, comparisons={"all_pairs": True})
    assert plots.heatmaps(setup, "tf_one") == ["results/plots/tf_one/human__vs__llm2_heatmap.png"]
    assert plots.heatmaps(setup, "tfidf") == [
        "results/plots/tfidf/human__vs__llm_heatmap.png",
        "results/plots/tfidf/human__vs__llm2_heatmap.png",
    ]
    pattern = plots.heatmap_pairs(setup)
    assert re.fullmatch(pattern, "human__vs__llm2")
    for other in ("llm__vs__llm2", "heatmaps/llm__vs__llm2", "human__vs__llm2_x"):
        assert not re.fullmatch(pattern, other), other
    assert plots.reference_pair(setup, "human__vs__llm2") == ("human", "llm2")


def test_a_heatmap_job_reads_the_within_matrices_of_its_two_sets(study):
    z = {"kind": "tfidf", "thresholds": [2.0], "scale": "z"}
    setup = setup_of(study, methods=METHODS | {"tfidf": z})
    within = plots.scale_files(setup, "tfidf", ("human", "llm2"))["within"]
    assert within == {
        s: f"results/similarity/tfidf/{s}__vs__{s}.parquet" for s in ("human", "llm2")
    }
    assert len(plots.scale_files(setup, "tfidf")["within"]) == 3


def test_similarity_rules_are_the_kinds_rule_names_each_defined_once(study):
    setup = setup_of(study)
    assert methods.similarity_rules(setup) == [
        "similarity_embedding",
        "similarity_tfidf",
        "similarity_precomputed",
        "similarity_abtt",
        "similarity_judge",
    ]
    assert methods.similarity_methods(setup, "similarity_tfidf") == "tfidf|tf_one"
    nothing = methods.similarity_methods(
        setup, "similarity_abtt"
    )  # no abtt method: matches nothing
    assert not [m for m in setup.study.methods if re.fullmatch(nothing, m)]
    assert methods.similarity_job(setup, "similarity_tfidf")["threads"] == 1
    text = (REPO / "workflow" / "rules" / "similarity.smk").read_text()
    defined = re.findall(r"^ *rule (\w+):|^ *use rule \w+ as (\w+) with:", text, re.MULTILINE)
    assert [a or b for a, b in defined] == methods.similarity_rules(setup)


def test_similarity_paths_hold_the_comparisons_and_within_pairs_by_kind(study):
    """What a similarity job writes into its folder (its `paths` param), per kind."""
    setup = setup_of(study, comparisons={"all_pairs": True})

    def names(method):
        files = similarity.files(setup, method, setup.study.method_pairs(method))
        return [Path(f).stem for f in files]

    within = ["human__vs__human", "llm__vs__llm", "llm2__vs__llm2"]
    every = ["human__vs__llm", "human__vs__llm2", "llm__vs__llm2"]
    assert names("tfidf") == every + within  # tfidf writes within-set matrices
    assert names("judge") == every  # precomputed matrices: no within-set files
    assert names("tf_one") == ["human__vs__llm2", "human__vs__human", "llm2__vs__llm2"]
    assert similarity.sets(setup, "tf_one") == ["human", "llm2"]
    assert similarity.sets(setup, "minilm") == ["human", "llm", "llm2"]  # reads embeddings


def test_final_outputs_of_a_restricted_method_are_its_comparisons_only(study):
    outs = outputs.final_outputs(setup_of(study))
    assert "results/plots/tf_one/human__vs__llm2_heatmap.png" in outs
    assert not [f for f in outs if "tf_one/human__vs__llm_" in f]
    assert "results/plots/tfidf/human__vs__llm_heatmap.svg" in outs
    assert "results/metrics/tf_one/grounding.csv" in outs
    assert len(outs) == len(set(outs))  # each once (coder_agreement.csv too)
    assert outs.count("results/grounding/coder_agreement.csv") == 1


def test_figures_come_from_one_table(study):
    setup = setup_of(study)
    # run consistency: tfidf has a run group (llm, llm2); tf_one compares llm2 alone
    files = plots.method_plot_files(setup, "tfidf")
    assert files == {f.key: f"results/plots/tfidf/{f.stem}.png" for f in METHOD_FIGURES}
    contract = {  # the paths are a contract; a new figure may join them
        "distributions_png": "results/plots/tfidf/distributions.png",
        "confidence_png": "results/plots/tfidf/confidence.png",
        "theme_map_png": "results/plots/tfidf/theme_map.png",
        "run_consistency_png": "results/plots/tfidf/run_consistency.png",
    }
    assert contract.items() <= files.items()
    assert "run_consistency_png" not in plots.method_plot_files(setup, "tf_one")
    assert "theme_map_png" not in plots.method_plot_files(setup, "judge")  # no theme vectors
    # report_parts draws every figure of the table but run consistency, PNG and SVG
    drawn = {f.stem for f in METHOD_FIGURES if f.drawn_by == "report_parts"}
    assert plots.method_figure_files(setup, "tfidf") == {
        s: {ext: f"results/plots/tfidf/{s}.{ext}" for ext in ("png", "svg")} for s in drawn
    }
    wrapped = [e for e in plots.report_parts_outputs(setup) if isinstance(e, Report)]
    assert (
        Report(
            "results/plots/judge/confidence.png", "confidence.rst", "Confidence profiles", "judge"
        )
        in wrapped
    )
    listed = [e.path if isinstance(e, Report) else e for e in plots.report_parts_outputs(setup)]
    for m in setup.study.methods:
        for stem, paths in plots.method_figure_files(setup, m).items():
            assert set(paths.values()) <= set(listed), (m, stem)


def test_archive_holds_the_final_results_and_the_side_tables(study):
    setup = setup_of(study)
    archived = outputs.archive_results(setup)
    assert len(archived) == len(set(archived))
    assert {f for f in outputs.final_outputs(setup) if f.startswith("results/")} <= set(archived)
    for f in (
        "results/similarity/tf_one/manifest.csv",
        "results/metrics/tf_one/transport/manifest.csv",
        "results/metrics/minilm/sets_themes.csv",
        "results/metrics/tfidf/runs_matrix.parquet",
        "results/embeddings/minilm/llm2.parquet",
    ):
        assert f in archived, f
    assert "results/embeddings/tfidf/llm2.parquet" not in archived


def test_workbook_and_report_inputs(study):
    setup = setup_of(study)
    sheets = summary.workbook_tables(setup)
    assert list(sheets)[:2] == ["headline", "verdicts"]
    assert sheets["tf_one comparisons"] == "results/metrics/tf_one/comparisons.csv"
    assert "tf_one runs" not in sheets and sheets["tfidf runs"] == "results/metrics/tfidf/runs.csv"
    files = summary.report_method_files(setup, "tf_one")
    assert files["grounding_heatmaps"] == {
        "human__vs__llm2": "results/plots/tf_one/grounding/human__vs__llm2_iou.png"
    }
    assert plots.plot_limit(setup, "max_pair_panels") == 30
    assert (
        plots.plot_limit(setup_of(study, plots={"max_pair_panels": None}), "max_pair_panels")
        is None
    )


def test_rule_files_type_no_results_path():
    """The rules read results paths from themesim.paths, never a literal of their own."""
    found = []
    for path in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for i, line in enumerate(path.read_text().splitlines(), start=1):
            # a results path, or a file name typed onto a formatted path
            if re.search(r"[\"']results/", line) or "}/" in line:
                found.append(f"{path.name}:{i}: {line.strip()}")
    assert not found, found


def test_rule_files_define_no_rule_in_a_loop():
    """Each stage is a plain rule keyed by {method}: no rule is defined inside a `for` loop
    (a rule per group of methods), and no rule file reaches into Snakemake's resource
    settings (a profile's set-threads/set-resources name the rules themselves)."""
    found = set()
    for path in sorted([REPO / "Snakefile", *(REPO / "workflow" / "rules").glob("*.smk")]):
        loops = []  # indentation of the `for` blocks open at a line
        for line in path.read_text().splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            indent = len(line) - len(line.lstrip())
            loops = [d for d in loops if d < indent]
            if re.match(r"\s*(rule|checkpoint|use rule)\b", line) and loops:
                found.add(path.name)
            if re.match(r"\s*for\b.*:\s*$", line):
                loops.append(indent)
            if "resource_settings" in line:
                found.add(path.name)
    assert not found, found
