"""plots.max_pair_panels: above it the per-comparison figures draw the reference's
comparisons and one summary of all, so their size stays bounded; below it nothing changes."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import thresholds_of

from themesim.report.plots.distributions import (
    confidence_figure,
    confidence_profile,
    distributions,
    distributions_figure,
)
from themesim.report.plots.pair_limit import quartiles_by_threshold
from themesim.report.plots.side_by_side import methods_side_by_side, methods_side_by_side_figure
from themesim.report.plots.sweep import sweep_curves, sweep_summary_figure

METRICS = ["hungarian_f1", "true_jaccard", "f1", "hit_rate", "raza_jaccard"]
THRESHOLDS = [0.0, 0.5, 1.0]


def all_pairs(n_sets: int) -> list[tuple[str, str]]:
    sets = ["ref", *(f"s{i:02d}" for i in range(1, n_sets))]
    return [(a, b) for i, a in enumerate(sets) for b in sets[i + 1 :]]


def sweep_table(pairs) -> pd.DataFrame:
    """Comparison k of n scores k / (n - 1) on every metric at every threshold, so across
    comparisons the median is 0.5 and the quartiles 0.25 and 0.75 (linear interpolation)."""
    n = len(pairs)
    rows = [
        {"set_a": a, "set_b": b, "threshold": t, "op": "ge", "n_a": 4, "n_b": 4}
        | dict.fromkeys(METRICS, k / (n - 1))
        for k, (a, b) in enumerate(pairs)
        for t in THRESHOLDS
    ]
    return pd.DataFrame(rows)


def themes_table(pairs) -> pd.DataFrame:
    """Per comparison: A has 2 themes (matched at 0.9 and 0.6), B has 1; categories fixed."""
    rows = []
    for a, b in pairs:
        rows.append([a, b, "a", "0.9", "0.3", "confident_unique"])
        rows.append([a, b, "a", "0.6", "0.05", "ambiguous"])
        rows.append([a, b, "b", "0.9", "0.2", "clear_but_poor"])
    cols = ["set_a", "set_b", "side", "hungarian_similarity", "gap_abs", "category"]
    t = pd.DataFrame(rows, columns=cols)
    return t.assign(category_threshold="0.5")


def _png(fig_fn, tmp_path, name, **kw) -> bytes:
    out = fig_fn(out_png=tmp_path / f"{name}.png", **kw)
    return out.read_bytes()


def test_quartiles_by_threshold_by_hand():
    q = quartiles_by_threshold(sweep_table(all_pairs(5)), ["hungarian_f1"])  # 10 comparisons
    assert list(q["threshold"]) == THRESHOLDS
    assert list(q["hungarian_f1_median"]) == pytest.approx([0.5] * 3)
    assert list(q["hungarian_f1_q1"]) == pytest.approx([0.25] * 3)
    assert list(q["hungarian_f1_q3"]) == pytest.approx([0.75] * 3)


def test_sweep_above_the_limit_draws_the_reference_panels_and_one_summary(tmp_path):
    pairs = all_pairs(6)  # 15 comparisons, 5 of them the reference's
    sweep = sweep_table(pairs)
    fig = sweep_summary_figure(
        sweep, thresholds=thresholds_of([0.5]), title="tfidf", reference="ref", max_panels=4
    )
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[:4] == [f"ref vs s0{i}  (A=4, B=4)" for i in range(1, 5)]
    assert len(fig.axes) == 5 and titles[4].startswith("all 15 comparisons")
    summary = fig.axes[4]
    hung = [ln for ln in summary.get_lines() if ln.get_linewidth() == 2.4]
    assert list(hung[0].get_ydata()) == pytest.approx([0.5] * 3)
    band = summary.collections[0].get_paths()[0].vertices[:, 1]
    assert (band.min(), band.max()) == pytest.approx((0.25, 0.75))
    # 40 sets (780 comparisons, 39 of the reference's): as many panels, same size.
    big = sweep_summary_figure(
        sweep_table(all_pairs(40)),
        thresholds=thresholds_of([0.5]),
        title="t",
        reference="ref",
        max_panels=4,
    )
    assert len(big.axes) == 5 and big.axes[4].get_title().startswith("all 780 comparisons")
    assert tuple(big.get_size_inches()) == tuple(fig.get_size_inches())
    assert tuple(fig.get_size_inches()) == pytest.approx((4.2 * 3, 3.2 * 2 + 1.0))


def test_sweep_at_or_below_the_limit_is_unchanged(tmp_path):
    sweep = sweep_table(all_pairs(4))  # 6 comparisons
    kw = {"thresholds": thresholds_of([0.5]), "title": "t", "out_png": tmp_path / "a.png"}
    plain = sweep_curves(sweep, **kw).read_bytes()
    kw["out_png"] = tmp_path / "b.png"
    limited = sweep_curves(sweep, reference="ref", max_panels=6, **kw).read_bytes()
    assert limited == plain
    kw["out_png"] = tmp_path / "c.png"
    assert sweep_curves(sweep, reference="ref", max_panels=5, **kw).read_bytes() != plain


def test_distributions_above_the_limit_pool_all_comparisons_in_one_row(tmp_path):
    t = themes_table(all_pairs(30))  # 435 comparisons
    fig = distributions_figure(t, op="ge", gamma=0.1, title="m", reference="ref", max_panels=3)
    ax_sim, ax_gap = fig.axes[:2]
    labels = [x.get_text().replace("\n", " ") for x in ax_sim.get_yticklabels()]
    assert labels == ["ref vs s01", "ref vs s02", "ref vs s03", "all 435 comparisons, pooled"]
    assert fig.get_size_inches()[1] == pytest.approx(1.6 + 0.75 * 4)
    # Dots only for the 3 reference rows (2 matches each), none for the 870 pooled matches.
    assert sum(len(c.get_offsets()) for c in ax_sim.collections) == 6
    assert "n=870" in [x.get_text() for x in ax_sim.texts]
    # Below the limit: the same bytes as without one.
    small = themes_table(all_pairs(3))
    kw = {"op": "ge", "gamma": 0.1, "title": "m"}
    plain = _png(distributions, tmp_path, "a", themes=small, **kw)
    limited = {"reference": "ref", "max_panels": 3}
    same = _png(distributions, tmp_path, "b", themes=small, **limited, **kw)
    assert same == plain


def test_confidence_above_the_limit_sums_every_side(tmp_path):
    t = themes_table(all_pairs(30))  # 435 comparisons
    fig = confidence_figure(t, op="ge", gamma=0.1, title="m", reference="ref", max_panels=2)
    ax = fig.axes[0]
    labels = [x.get_text().replace("\n", " ") for x in ax.get_yticklabels()]
    assert len(labels) == 2 * 2 + 2
    assert labels[:2] == ["ref vs s01: A = ref (2)", "ref vs s01: B = s01 (1)"]
    assert labels[4:] == [
        "all 435 comparisons: every A (870)",
        "all 435 comparisons: every B (435)",
    ]
    assert fig.get_size_inches()[1] == pytest.approx(1.8 + 0.42 * 6)
    # every A: 435 confident unique and 435 ambiguous; every B: 435 clear but poor.
    assert [x.get_text() for x in ax.texts][-3:] == ["435", "435", "435"]
    widths = {}
    for p in ax.patches:
        widths.setdefault(round(p.get_y() + p.get_height() / 2), []).append(p.get_width())
    assert widths[4] == pytest.approx([0.5, 0.5]) and widths[5] == pytest.approx([1.0])
    small = themes_table(all_pairs(3))
    kw = {"op": "ge", "gamma": 0.1, "title": "m"}
    plain = _png(confidence_profile, tmp_path, "a", themes=small, **kw)
    same = _png(
        confidence_profile, tmp_path, "b", themes=small, reference="ref", max_panels=9, **kw
    )
    assert same == plain


def test_side_by_side_above_the_limit_draws_reference_lines_and_the_median(tmp_path):
    big, small = sweep_table(all_pairs(30)), sweep_table(all_pairs(3))  # 435 and 3
    fig = methods_side_by_side_figure(
        {"tfidf": big, "minilm": small},
        thresholds={"tfidf": thresholds_of([0.5]), "minilm": thresholds_of([0.6])},
        reference="ref",
        max_panels=3,
    )
    panels = {ax.get_label(): ax for ax in fig.axes}
    # columns: the reference's first 3 comparisons (435 would be 435 panels), then all of them
    assert list(panels)[:4] == [f"tfidf|ref vs s0{i}" for i in (1, 2, 3)] + ["tfidf|all"]
    median = [ln for ln in panels["tfidf|all"].get_lines() if ln.get_linewidth() == 2.6]
    assert len(median) == 1 and list(median[0].get_ydata()) == pytest.approx([0.5] * 3)
    assert panels["tfidf|all"].texts[0].get_text() == "435"
    drawn = [p for k, p in panels.items() if k.startswith("tfidf|ref") and p.get_lines()]
    assert len(drawn) == 3
    # minilm (3 comparisons, under the limit): its reference comparisons, no summary
    assert not [ln for ln in panels["minilm|all"].get_lines()]
    legend = [x.get_text() for x in fig.legends[0].get_texts()]
    assert "median of all comparisons" in legend and len(legend) == 4
    # under the limit, with a reference: its comparisons, as if the sweep held only them
    kw = {"thresholds": {"m": thresholds_of([0.5])}}
    only = small[small["set_a"] == "ref"]
    plain = _png(methods_side_by_side, tmp_path, "a", sweeps={"m": only}, **kw)
    same = _png(
        methods_side_by_side,
        tmp_path,
        "b",
        sweeps={"m": small},
        reference="ref",
        max_panels=3,
        **kw,
    )
    assert same == plain


def headline_table(pairs) -> pd.DataFrame:
    """Comparison k of n: Hungarian F1 k / (n - 1), interval ±0.05, for two methods."""
    n = len(pairs)
    return pd.DataFrame(
        [
            {
                "method": m,
                "set_a": a,
                "set_b": b,
                "threshold": 0.5,
                "hungarian_f1": k / (n - 1),
                "hungarian_f1_ci_low": k / (n - 1) - 0.05,
                "hungarian_f1_ci_high": k / (n - 1) + 0.05,
            }
            for m in ("minilm", "tfidf")
            for k, (a, b) in enumerate(pairs)
        ]
    )


def test_headline_intervals_above_the_limit_draw_the_reference_rows_and_a_box(tmp_path):
    from themesim.report.threshold_plots import (
        headline_intervals,
        headline_intervals_figure,
        headline_intervals_summary_figure,
    )

    df = headline_table(all_pairs(30))  # 435 comparisons per method
    fig = headline_intervals_summary_figure(df, "hungarian_f1", "ref", 3)
    ax = fig.axes[0]
    labels = [x.get_text() for x in ax.get_yticklabels()]
    assert labels == ["ref vs s01", "ref vs s02", "ref vs s03", "all 435 comparisons (box)"]
    assert fig.get_size_inches()[1] == pytest.approx(1.0 + 0.38 * 4)
    dots = [ln.get_xdata()[0] for ln in ax.get_lines() if len(ln.get_xdata()) == 1]
    assert dots == pytest.approx([0.0, 1 / 434, 2 / 434])  # the reference's first three
    medians = [ln for ln in ax.get_lines() if ln.get_linewidth() == 2 and ln.get_color() == "black"]
    assert list(medians[0].get_xdata()) == pytest.approx([0.5, 0.5])
    # Below the limit: the plain figure, byte for byte.
    small = headline_table(all_pairs(3))
    plain = headline_intervals(small, out_png=tmp_path / "a.png").read_bytes()
    same = headline_intervals(small, out_png=tmp_path / "b.png", reference="ref", max_panels=3)
    assert same.read_bytes() == plain
    assert len(headline_intervals_figure(small).axes[0].get_yticklabels()) == 3


def test_report_sections_above_the_limit_are_the_reference_comparisons(tmp_path):
    from helpers import write_thresholds

    from themesim.report.tables import COMPARISON_COLUMNS, THEME_COLUMNS
    from themesim.report.views import method_view

    pairs = all_pairs(8)  # 28 comparisons, 7 of them the reference's
    rows = []
    for a, b in pairs:
        row = dict.fromkeys(COMPARISON_COLUMNS, 0.5)
        row.update(method="m", set_a=a, set_b=b, threshold=0.5, op="ge", n_a=2, n_b=2)
        rows.append(row)
    comp = tmp_path / "comparisons.csv"
    pd.DataFrame(rows).to_csv(comp, index=False)
    themes = tmp_path / "themes.csv"
    pd.DataFrame(columns=THEME_COLUMNS).to_csv(themes, index=False)
    thresholds = write_thresholds(tmp_path / "thresholds.csv", "m", [0.5])
    spec = {
        "comparisons_csv": comp,
        "themes_csv": themes,
        "thresholds_csv": thresholds,
        "reference": "ref",
    }
    full = method_view("m", spec, tmp_path, tmp_path)
    assert len(full["comparisons"]) == 28 and full["limited"] is None
    assert method_view("m", spec | {"max_pair_panels": 28}, tmp_path, tmp_path) == full
    view = method_view("m", spec | {"max_pair_panels": 5}, tmp_path, tmp_path)
    assert [c["title"] for c in view["comparisons"]] == [f"ref vs s0{i}" for i in range(1, 6)]
    assert len(view["table_rows"]) == len(view["glance_rows"]) == 5
    assert view["limited"] == {"n": "28", "limit": 5, "shown": 5}
    assert len(view["records"]) == 28  # every row still read (side-by-side table, headline)
