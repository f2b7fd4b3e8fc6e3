"""One registry for what a metric is (metrics/registry.py) and one for the per-method
figures (report/figures.py): the tables, figures, glossary and file lists read them."""

from importlib import import_module
from pathlib import Path

from helpers import thresholds_of

from themesim.metrics import columns, registry
from themesim.metrics.intervals.intervals import CI_METRICS, metric_method
from themesim.report import figures, glossary, headline, textblock, views
from themesim.report.plots import side_by_side, sweep

REPO = Path(__file__).resolve().parents[1]


def test_comparisons_csv_keeps_its_columns_in_order():
    # the contract of comparisons.csv: these columns, in this order (a new metric may join)
    kept = [
        "n_a", "n_b", "n_match_pairs", "raza_jaccard", "hit_rate", "recall", "precision", "f1",
        "bidir_max_sim_a", "bidir_max_sim_b", "similarity_f1", "hungarian_n_matched",
        "hungarian_coverage_a", "hungarian_coverage_b", "hungarian_f1", "true_jaccard",
        "matched_sim_min", "matched_sim_q1", "matched_sim_median", "matched_sim_q3",
        "matched_sim_max", "maxcard_n_matched", "maxcard_coverage_a", "maxcard_coverage_b",
        "maxcard_f1", "maxcard_true_jaccard",
    ]  # fmt: skip
    assert [c for c in columns.METRIC_COLUMNS if c in kept] == kept
    assert columns.METRIC_COLUMNS[:2] == ["n_a", "n_b"]
    assert columns.COVERAGE_COLUMNS[-1] != "hungarian_n_matched"
    assert columns.ONE_TO_ONE_COLUMNS[0] == "hungarian_n_matched"


def test_interval_methods_come_from_the_registry():
    assert "n_a" not in CI_METRICS and "n_b" not in CI_METRICS
    for m in registry.METRICS:
        if m.column in CI_METRICS:
            assert metric_method(m.column) == m.interval
    assert metric_method("hungarian_f1") == "clopper-pearson"
    assert metric_method("matched_sim_q1") == "order statistics"
    assert metric_method("gap_abs_q1_a") == "order statistics"
    assert metric_method("share_ambiguous_b") == "clopper-pearson"


def test_each_shown_metric_has_one_label_everywhere():
    shown = {c for cols in registry.SECTIONS.values() for c in cols}
    for col in shown:
        m = registry.BY_COLUMN[col]
        assert m.label and m.term in glossary.GLOSSARY_KEYS, col
        assert glossary.term_key(m.label) == m.term
    assert views.METHOD_TABLE[2:] == registry.section("method_table")
    assert views.CHANGE_METRICS == registry.section("threshold_changes")
    assert views.GLANCE_HEADERS[3] == registry.label("hungarian_f1")
    assert set(views.GLANCE_HEADERS[3:]) - {"Hungarian F1 95 % CI", "Matched sim. IQR (Q1–Q3)"} <= {
        m.label for m in registry.METRICS if m.glance
    }
    # the figures spell a metric out where a legend is given, else use its label
    assert sweep.SWEEP_METRICS["hungarian_f1"][0] == registry.legend("hungarian_f1")
    assert sweep.SWEEP_METRICS["true_jaccard"][0] == registry.label("true_jaccard")
    fig = side_by_side.methods_side_by_side_figure(
        {"m": _sweep()}, thresholds={"m": thresholds_of([0.5])}, metric="maxcard_f1"
    )
    assert fig.get_suptitle().startswith(registry.legend("maxcard_f1"))
    block = textblock.format_text_block(_sweep().iloc[0].to_dict(), "≥ 0.5")
    assert block.startswith(f"Theme Alignment: {registry.label('hungarian_f1')} = ")


def test_headline_columns_are_the_glance_columns():
    cols = headline.HEADLINE_COLUMNS
    assert cols[5 : 5 + len(registry.AT_A_GLANCE)] == list(registry.AT_A_GLANCE)
    assert registry.BY_COLUMN["hungarian_f1"].glance
    assert not registry.BY_COLUMN["true_jaccard"].glance


def test_a_metric_with_a_definition_brings_its_glossary_entry():
    assert set(registry.glossary_entries()) <= set(glossary.GLOSSARY)
    m = registry.Metric("x", "coverage", label="X", term="x", definition="What x is.")
    assert (m.term, m.label, m.definition) == ("x", "X", "What x is.")


def test_each_figure_has_one_name_and_its_words():
    stems = [f.stem for f in figures.METHOD_FIGURES]
    assert len(stems) == len(set(stems))
    for f in figures.METHOD_FIGURES:
        assert f.key == f"{f.stem}_png"
        assert f.title and f.alt and f.caption and f.missing, f.stem
        assert f.place in ("figures", "runs", "files")
        assert (REPO / "workflow" / "report" / f"{f.stem}.rst").is_file(), f.stem

    # report_parts draws each of its figures with the function the entry names, and no other
    for f in figures.METHOD_FIGURES:
        if f.drawn_by != "report_parts":
            assert not f.draws, f.stem
            continue
        module, name = f.draws.split(":")
        assert callable(getattr(import_module(module), name)), f.stem
        # one job draws every method's figure: its caption has no {method} wildcard to show
        caption = (REPO / "workflow" / "report" / f"{f.stem}.rst").read_text()
        assert "wildcards" not in caption, f.stem


def _sweep():
    import pandas as pd

    rows = []
    for t in (0.4, 0.5, 0.6):
        row = {c: 0.5 for c in columns.METRIC_COLUMNS}
        row.update(set_a="a", set_b="b", threshold=t, n_a=4, n_b=4, hungarian_n_matched=2)
        rows.append(row)
    return pd.DataFrame(rows)
