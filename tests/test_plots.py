"""Figures: valid, sensibly sized, reproducible PNGs; one panel per method."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import thresholds_of, write_theme_set
from PIL import Image

from themesim.report.plots.common import LABEL_WIDTH, save_png, theme_label, wrap_label
from themesim.report.plots.distributions import (
    THEME_TABLE_COLUMNS,
    confidence_figure,
    confidence_profile,
    distributions,
    distributions_figure,
    matched_pairs,
    matched_similarities,
)
from themesim.report.plots.heatmap import (
    Cutoff,
    ThemeAxis,
    diagonal_order,
    heatmap,
    heatmap_figure,
)
from themesim.report.plots.runs import runs_heatmap, runs_heatmap_figure
from themesim.report.plots.side_by_side import methods_side_by_side, methods_side_by_side_figure
from themesim.report.plots.sweep import sweep_curves, sweep_curves_figure
from themesim.report.plots.theme_map import pca_2d, theme_map, theme_map_figure

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SWEEP_METRICS = ["raza_jaccard", "hit_rate", "f1", "hungarian_f1", "true_jaccard"]


def png_size(path) -> tuple[int, int]:
    """Width and height from the IHDR chunk (checked against Pillow too)."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    w, h = struct.unpack(">II", data[16:24])
    with Image.open(path) as im:
        im.verify()
    with Image.open(path) as im:
        assert im.size == (w, h)
    return w, h


def matrix(n_a: int, n_b: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.0, 1.0, (n_a, n_b))


def labels(prefix: str, n: int) -> list[str]:
    return [f"{prefix} theme {i} about caring for an ageing parent at home" for i in range(n)]


def sweep_table(method: str, comps: list[tuple[str, str]], seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for a, b in comps:
        for t in np.round(np.arange(0, 1.0001, 0.01), 2):
            row = {
                "method": method,
                "set_a": a,
                "set_b": b,
                "threshold": t,
                "op": "ge",
                "n_a": 6,
                "n_b": 5,
            }
            for m in SWEEP_METRICS:
                row[m] = float(np.clip(1 - t * rng.uniform(0.8, 1.2), 0, 1))
            rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# labels


def test_wrap_label_two_lines_then_ellipsis_and_keeps_id():
    long = "H03 Guilt and obligation when the family expects daily care from the eldest daughter"
    wrapped = wrap_label(long)
    lines = wrapped.split("\n")
    assert len(lines) == 2
    assert all(len(line) <= LABEL_WIDTH for line in lines)
    assert lines[0].startswith("H03 ")
    assert lines[1].endswith("…")
    assert wrap_label("H01 Short") == "H01 Short"


def test_theme_label_prefixes_id_once():
    assert theme_label("H03", "Guilt and obligation") == "H03 Guilt and obligation"
    assert theme_label("H03", "H03 Guilt") == "H03 Guilt"
    assert theme_label(None, "Guilt") == "Guilt"


# ---------------------------------------------------------------------------
# heatmap


def test_heatmap_writes_png_that_grows_with_matrix(tmp_path):
    small = heatmap(
        matrix(3, 4),
        ThemeAxis(labels("A", 3)),
        ThemeAxis(labels("B", 4)),
        cutoff=Cutoff(0.5, "ge"),
        title="human vs llm (minilm)",
        out_png=tmp_path / "small.png",
        pairs=[(0, 0), (1, 2)],
    )
    big = heatmap(
        matrix(22, 20),
        ThemeAxis(labels("A", 22), ids=[f"H{i:02d}" for i in range(22)]),
        ThemeAxis(labels("B", 20), ids=[f"L{i:02d}" for i in range(20)]),
        cutoff=Cutoff(0.5, "gt"),
        title="human vs llm (minilm)",
        out_png=tmp_path / "sub" / "big.png",
        pairs=[(i, i) for i in range(20)],
    )
    assert small == tmp_path / "small.png" and big == tmp_path / "sub" / "big.png"
    sw, sh = png_size(small)
    bw, bh = png_size(big)
    # ~0.5 in per cell at 150 dpi plus margins for labels.
    assert 500 < sw < 1600 and 400 < sh < 1400
    assert bw > sw + 1000 and bh > sh + 1000
    assert bw < 4000 and bh < 4000


def test_heatmap_is_byte_identical_across_runs(tmp_path):
    kwargs = dict(cutoff=Cutoff(0.6, "ge"), title="t", pairs=np.array([[1, 1], [2, 3]]))
    a, b = ThemeAxis(labels("A", 5)), ThemeAxis(labels("B", 6))
    one = heatmap(matrix(5, 6), a, b, out_png=tmp_path / "1.png", **kwargs)
    two = heatmap(matrix(5, 6), a, b, out_png=tmp_path / "2.png", **kwargs)
    assert one.read_bytes() == two.read_bytes()
    assert b"matplotlib" not in one.read_bytes().lower()  # no Software stamp


def _heatmap_texts(fig):
    ax = fig.axes[0]
    return [t.get_text() for t in ax.texts]


def test_heatmap_annotations_outlines_and_pairs():
    S = np.array([[0.9, 0.5, 0.1], [0.5, 0.49, 0.75]])
    fig = heatmap_figure(
        S,
        ThemeAxis(["a0", "a1"]),
        ThemeAxis(["b0", "b1", "b2"]),
        cutoff=Cutoff(0.5, "ge"),
        title="t",
        pairs=[(0, 0)],
    )
    ax = fig.axes[0]
    assert _heatmap_texts(fig) == ["0.90", "0.50", "0.10", "0.50", "0.49", "0.75"]
    rects = [p for p in ax.patches if p.get_edgecolor()[:3] == (0.0, 0.0, 0.0)]
    assert len(rects) == 4  # cells with S >= 0.5
    pair_rects = [p for p in ax.patches if p.get_linewidth() > 2]
    assert len(pair_rects) == 1 and pair_rects[0].get_xy() == pytest.approx((-0.42, -0.42))
    # An assigned pair below the threshold is drawn dashed: it is not a match.
    fig2 = heatmap_figure(
        S,
        ThemeAxis(["a0", "a1"]),
        ThemeAxis(["b0", "b1", "b2"]),
        cutoff=Cutoff(0.5, "ge"),
        title="t",
        pairs=[(0, 0), (1, 1)],
    )
    styles = {p.get_xy(): p.get_linestyle() for p in fig2.axes[0].patches if p.get_linewidth() > 2}
    assert styles[(-0.42, -0.42)] == "solid" and styles[(1 - 0.42, 1 - 0.42)] != "solid"
    legend = [t.get_text() for t in fig2.legends[0].get_texts()]
    assert legend == [
        "S ≥ 0.5 (meets threshold)",
        "one-to-one (Hungarian) match",
        "one-to-one pair below threshold",
    ]
    # "gt": 0.5 itself no longer meets the threshold.
    fig_gt = heatmap_figure(
        S,
        ThemeAxis(["a0", "a1"]),
        ThemeAxis(["b0", "b1", "b2"]),
        cutoff=Cutoff(0.5, "gt"),
        title="t",
    )
    assert len(fig_gt.axes[0].patches) == 2


def test_heatmap_skips_annotations_above_25():
    fig = heatmap_figure(
        matrix(26, 4),
        ThemeAxis(labels("A", 26)),
        ThemeAxis(labels("B", 4)),
        cutoff=Cutoff(0.5, "ge"),
        title="t",
    )
    assert _heatmap_texts(fig) == []


def test_heatmap_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="3 A labels"):
        heatmap(
            matrix(2, 2),
            ThemeAxis(["a"] * 3),
            ThemeAxis(["b"] * 2),
            cutoff=Cutoff(0.5, "ge"),
            title="t",
            out_png=tmp_path / "x.png",
        )
    with pytest.raises(ValueError, match="op must be"):
        heatmap(
            matrix(2, 2),
            ThemeAxis(["a"] * 2),
            ThemeAxis(["b"] * 2),
            cutoff=Cutoff(0.5, "le"),
            title="t",
            out_png=tmp_path / "x.png",
        )


def test_heatmap_empty_set_does_not_crash(tmp_path):
    out = heatmap(
        np.zeros((0, 3)),
        ThemeAxis([]),
        ThemeAxis(labels("B", 3)),
        cutoff=Cutoff(0.5, "ge"),
        title="t",
        out_png=tmp_path / "e.png",
    )
    assert png_size(out)[0] > 100


# ---------------------------------------------------------------------------
# sweeps


def test_sweep_curves_panels_lines_and_thresholds(tmp_path):
    comps = [("human", "llm1"), ("human", "llm2"), ("llm1", "llm2"), ("human", "llm3")]
    sweep = sweep_table("minilm", comps)
    fig = sweep_curves_figure(sweep, thresholds=thresholds_of([0.5, 0.7], op="gt"), title="minilm")
    assert len(fig.axes) == 4  # one panel per comparison, unused grid cells removed
    ax = fig.axes[0]
    assert ax.get_title().startswith("human vs llm1")
    assert ax.get_ylim() == pytest.approx((0, 1.02))
    metric_lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == 101]
    assert len(metric_lines) == 5
    vlines = [
        ln
        for ln in ax.get_lines()
        if len(ln.get_xdata()) == 2 and ln.get_xdata()[0] == ln.get_xdata()[1]
    ]
    assert sorted(float(v.get_xdata()[0]) for v in vlines) == [0.5, 0.7]
    # the op of the method's thresholds names the axis, not a column read back from the table
    assert fig.axes[-1].get_xlabel() == "threshold θ (match if S > θ)"
    hungarian = next(ln for ln in metric_lines if ln.get_label().startswith("Hungarian"))
    expected = sweep[(sweep.set_a == "human") & (sweep.set_b == "llm1")]["hungarian_f1"].to_numpy()
    assert np.allclose(hungarian.get_ydata(), expected)

    out = sweep_curves(
        sweep, thresholds=thresholds_of([0.5, 0.7]), title="minilm", out_png=tmp_path / "s.png"
    )
    w, h = png_size(out)
    assert w > h > 300


def test_sweep_curves_missing_column_is_clear():
    with pytest.raises(ValueError, match="true_jaccard"):
        sweep_curves_figure(
            sweep_table("m", [("a", "b")]).drop(columns="true_jaccard"),
            thresholds=thresholds_of([]),
            title="t",
        )


def test_methods_side_by_side_small_multiples_one_line_each_never_averaged(tmp_path):
    sweeps = {
        "minilm": sweep_table("minilm", [("human", "llm1"), ("human", "llm2")], seed=1),
        "mpnet": sweep_table("mpnet", [("human", "llm1"), ("human", "llm2")], seed=2),
        "tfidf": sweep_table("tfidf", [("human", "llm1")], seed=3),
    }
    values = {"minilm": [0.5], "mpnet": [0.6, 0.7], "tfidf": [0.3]}
    thresholds = {m: thresholds_of(v) for m, v in values.items()}
    fig = methods_side_by_side_figure(sweeps, thresholds=thresholds)
    # a row per method, a column per comparison: 3 x 2 panels, no legend of many lines
    panels = {ax.get_label(): ax for ax in fig.axes}
    assert list(panels) == [f"{m}|human vs {b}" for m in sweeps for b in ("llm1", "llm2")]
    assert [ax.get_title() for ax in fig.axes[:2]] == ["human vs\nllm1", "human vs\nllm2"]
    assert [fig.axes[i].get_ylabel() for i in (0, 2, 4)] == ["minilm", "mpnet", "tfidf"]
    assert len({ax.get_ylim() for ax in fig.axes}) == 1  # same y-scale
    for name, df in sweeps.items():
        for b in ("llm1", "llm2"):
            ax = panels[f"{name}|human vs {b}"]
            curves = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == 101]
            own = df[(df.set_a == "human") & (df.set_b == b)]["hungarian_f1"].to_numpy()
            if not len(own):  # tfidf did not compare human with llm2: said, not drawn
                assert not curves and ax.texts[0].get_text() == "not run"
                continue
            # one line, exactly this method's values: nothing pooled across methods
            assert len(curves) == 1 and np.allclose(curves[0].get_ydata(), own)
            vlines = [float(ln.get_xdata()[0]) for ln in ax.get_lines() if len(ln.get_xdata()) == 2]
            assert vlines == values[name]
    assert len(fig.legends[0].get_texts()) == 2  # the metric and the threshold
    out = methods_side_by_side(
        sweeps, thresholds=thresholds, metric="true_jaccard", out_png=tmp_path / "m.png"
    )
    w, h = png_size(out)
    assert w > h


def test_methods_side_by_side_rejects_no_methods(tmp_path):
    with pytest.raises(ValueError, match="no methods"):
        methods_side_by_side({}, thresholds={}, out_png=tmp_path / "m.png")


def test_plotting_never_imports_pyplot(tmp_path):
    # Own Agg canvas: no pyplot global state, whatever backend the user has.
    out = tmp_path / "p.png"
    code = (
        "import sys, numpy as np; from themesim.report.plots import blocks, common, "
        "distributions, heatmap, pair_limit, pairs_overview, runs, side_by_side, sweep, "
        "theme_map; "
        "heatmap.heatmap(np.eye(2), heatmap.ThemeAxis(['a', 'b']), heatmap.ThemeAxis(['c', 'd']), "
        "cutoff=heatmap.Cutoff(0.5, 'ge'), title='t', "
        f"out_png=r'{out}'); "
        "assert 'matplotlib.pyplot' not in sys.modules"
    )
    import themesim

    # The source tree under test, not whichever copy is installed.
    env = {**os.environ, "PYTHONPATH": str(Path(themesim.__file__).parents[1])}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert png_size(out)[0] > 100


# ---------------------------------------------------------------------------
# SVG beside the PNG, diagonal order


def svg_root(path):
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


def test_svg_beside_png_parses_and_is_byte_identical(tmp_path):
    kwargs = dict(cutoff=Cutoff(0.5, "ge"), title="t", pairs=[(0, 1), (1, 0)])
    for k in (1, 2):
        heatmap(
            matrix(3, 4),
            ThemeAxis(labels("A", 3)),
            ThemeAxis(labels("B", 4)),
            out_png=tmp_path / f"{k}.png",
            out_svg=tmp_path / f"{k}.svg",
            **kwargs,
        )
    root = svg_root(tmp_path / "1.svg")
    width = float(root.get("width").removesuffix("pt"))
    height = float(root.get("height").removesuffix("pt"))
    # Same picture as the PNG: 150 dpi pixels are 150/72 of the SVG's points (the tight
    # box differs by a few points: SVG text is drawn as paths).
    w, h = png_size(tmp_path / "1.png")
    assert width * 150 / 72 == pytest.approx(w, rel=0.03)
    assert height * 150 / 72 == pytest.approx(h, rel=0.03)
    svg = (tmp_path / "1.svg").read_bytes()
    assert svg == (tmp_path / "2.svg").read_bytes()  # fixed id salt, no date
    assert b"<dc:date>" not in svg and b"matplotlib.org" not in svg


def test_diagonal_order_puts_pairs_on_the_diagonal():
    S = np.array(
        [
            [0.1, 0.2, 0.9, 0.3],
            [0.8, 0.6, 0.1, 0.2],
            [0.2, 0.1, 0.3, 0.7],
        ]
    )
    pairs = [(2, 3), (0, 2), (1, 0)]
    rows, cols = diagonal_order(S, pairs)
    # Pairs in A order; unpaired column 1 after them (its best row, 1, is second).
    assert rows == [0, 1, 2] and cols == [2, 0, 3, 1]
    fig = heatmap_figure(
        S,
        ThemeAxis(["a0", "a1", "a2"]),
        ThemeAxis(["b0", "b1", "b2", "b3"]),
        cutoff=Cutoff(0.5, "ge"),
        title="t",
        pairs=pairs,
    )
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["b2", "b0", "b3", "b1"]
    assert _heatmap_texts(fig)[:4] == ["0.90", "0.10", "0.30", "0.20"]
    pair_xy = np.array(sorted(p.get_xy() for p in ax.patches if p.get_linewidth() > 2))
    np.testing.assert_allclose(pair_xy, [(k - 0.42, k - 0.42) for k in range(3)])
    # Unpaired rows go last, next to where their best column sits.
    rows, cols = diagonal_order(S.T, [(2, 0), (0, 1)])
    # Row 1 is closest to column 1 (0.6, first on the diagonal), row 3 to column 0 (0.3).
    assert rows == [0, 2, 1, 3] and cols == [1, 0, 2]
    # Off: the input order stays.
    fig = heatmap_figure(
        S,
        ThemeAxis(["a0", "a1", "a2"]),
        ThemeAxis(["b0", "b1", "b2", "b3"]),
        cutoff=Cutoff(0.5, "ge"),
        title="t",
        pairs=pairs,
        diagonal=False,
    )
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["b0", "b1", "b2", "b3"]


def test_group_axis_and_block_max_by_hand():
    from themesim.report.plots.blocks import Grouping, block_max, group_axis, group_labels

    S = np.array([[0.1, 0.9, np.nan, 0.2], [0.4, 0.3, np.nan, 0.8], [0.0, 0.5, np.nan, 0.6]])
    rows = Grouping([np.array([0]), np.array([1, 2])])
    cols = Grouping([np.array([0, 1]), np.array([2]), np.array([3])])
    M = block_max(S, rows, cols)
    # Row group {1, 2} x column group {0, 1}: max(0.4, 0.3, 0.0, 0.5); column 2 is all NaN.
    np.testing.assert_array_equal(M, [[0.9, np.nan, 0.2], [0.5, np.nan, 0.8]])
    assert group_labels(["x", "y", "z"], rows, np.array([0.9, 0.8, 0.6])) == ["x", "[2] y"]
    # Small axes stay one theme per cell; large ones are cut into at most 3 runs of
    # (almost) equal size that together hold every theme once.
    assert group_axis(S, max_cells=3).groups == [np.array([0]), np.array([1]), np.array([2])]
    P = np.r_[np.full((4, 2), 0.9), np.full((3, 2), 0.1)] + np.arange(7)[:, None] * 1e-3
    g = group_axis(P, max_cells=2).groups
    assert sorted(len(x) for x in g) == [3, 4]
    assert sorted(np.concatenate(g).tolist()) == list(range(7))
    # The runs follow the clustering's leaf order, in which each far-apart clump is one run.
    order = np.concatenate(g).tolist()
    clump = [int(t >= 4) for t in order]
    assert clump in ([0, 0, 0, 0, 1, 1, 1], [1, 1, 1, 0, 0, 0, 0])


def test_heatmap_of_10_x_2000_draws_groups_in_bounded_width(tmp_path):
    from themesim.metrics.sets.coverage import hungarian_pairs
    from themesim.report.plots.blocks import MAX_CELLS

    S = matrix(10, 2000, seed=3)
    S[4, 1234] = 1.5  # one outstanding cell: its group must show it
    rows, cols = hungarian_pairs(S)
    fig = heatmap_figure(
        S,
        ThemeAxis(labels("A", 10)),
        ThemeAxis(labels("B", 2000), ids=[f"L{j:04d}" for j in range(2000)]),
        cutoff=Cutoff(1.2, "ge"),
        title="m: a vs b",
        pairs=list(zip(rows.tolist(), cols.tolist(), strict=True)),
    )
    ax = fig.axes[0]
    assert "columns: 2000 themes in 60 clustered groups" in ax.get_title()
    xt = [t.get_text() for t in ax.get_xticklabels()]
    assert len(xt) == MAX_CELLS and len(ax.get_yticklabels()) == 10
    # Group sizes add up to every column once: 2000 = 20 x 34 + 40 x 33.
    sizes = [int(t.split("]")[0].lstrip("[")) for t in xt]
    assert sum(sizes) == 2000 and set(sizes) == {33, 34}
    drawn = ax.images[0].get_array()
    assert drawn.shape == (10, MAX_CELLS) and drawn.max() == pytest.approx(1.5)
    # The group holding L1234 is named after it (its best member) and is the only outlined one.
    col = int(np.argmax(drawn[4]))
    assert "L1234" in xt[col].replace("\n", " ")
    outlined = [p for p in ax.patches if p.get_edgecolor()[:3] == (0.0, 0.0, 0.0)]
    assert len(outlined) == 1 and outlined[0].get_xy() == pytest.approx((col - 0.5, 4 - 0.5))
    out = save_png(fig, tmp_path / "big.png")
    w, h = png_size(out)
    assert w < 4000 and h < 2000  # 76,524 px wide when drawn cell by cell


# ---------------------------------------------------------------------------
# distributions, confidence profile, theme map, run consistency


def themes_table() -> pd.DataFrame:
    """Two comparisons of a themes.csv (strings, as the pipeline reads it)."""
    rows = []
    # human vs llm: pairs 0.9, 0.7, 0.5 (= θ: matched with ge, not with gt), one unpaired A theme.
    for i, (sim, gap, cat) in enumerate(
        [
            ("0.9", "0.4", "confident_unique"),
            ("0.7", "0.05", "ambiguous"),
            ("0.5", "0.2", "confident_unique"),
            ("", "0.01", "no_good_match"),
        ]
    ):
        rows.append(["human", "llm", "a", f"H{i}", sim, gap, cat, "0.5", f"L{i}" if sim else ""])
    for i, (gap, cat) in enumerate([("0.3", "confident_unique"), ("0.1", "clear_but_poor")]):
        rows.append(["human", "llm", "b", f"L{i}", "", gap, cat, "0.5", ""])
    # human vs llm2: nothing meets θ.
    rows.append(["human", "llm2", "a", "H0", "0.2", "0.0", "no_good_match", "0.5", "M0"])
    rows.append(["human", "llm2", "b", "M0", "0.2", "0.3", "clear_but_poor", "0.5", "H0"])
    cols = [*THEME_TABLE_COLUMNS[:2], "side", "theme_id", "hungarian_similarity"]
    cols += ["gap_abs", "category", "category_threshold", "hungarian_partner_id"]
    return pd.DataFrame(rows, columns=cols)


def test_matched_similarities_follow_op_and_threshold():
    t = themes_table()
    llm = t[t.set_b == "llm"]
    assert sorted(matched_similarities(llm, "ge")) == [0.5, 0.7, 0.9]
    assert sorted(matched_similarities(llm, "gt")) == [0.7, 0.9]
    pairs = matched_pairs(t, "ge")
    assert list(pairs["a_id"]) == ["H0", "H1", "H2"] and list(pairs["b_id"]) == ["L0", "L1", "L2"]
    assert len(matched_similarities(t[t.set_b == "llm2"], "ge")) == 0


def _boxes(ax):
    """(median, q1, q3, whisker low, whisker high) of each box drawn on the axes, by y."""
    out = {}
    for ln in ax.get_lines():
        x, y = np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)
        if len(x) == 2 and x[0] == x[1] and y[0] != y[1]:  # a vertical segment: median or cap
            out.setdefault(round(float(y.mean()), 3), []).append(float(x[0]))
    return out


def test_distributions_show_quartiles_not_means(tmp_path):
    t = themes_table()
    fig = distributions_figure(t, op="ge", gamma=0.15, title="minilm")
    ax_sim, ax_gap = fig.axes[:2]
    assert [x.get_text() for x in ax_sim.get_yticklabels()] == ["human vs llm", "human vs llm2"]
    verticals = _boxes(ax_sim)[0.0]  # median line and both caps of row 0
    assert sorted(verticals) == pytest.approx([0.5, 0.7, 0.9])  # min, median, max
    boxes = [p for p in ax_sim.patches if p.get_path().vertices.size]
    q1, q3 = np.percentile([0.5, 0.7, 0.9], [25, 75])
    xs = boxes[0].get_path().vertices[:, 0]
    assert (xs.min(), xs.max()) == pytest.approx((q1, q3))
    texts = [x.get_text() for x in ax_sim.texts]
    assert "n=3" in texts and "n=0" in texts and "no one-to-one match meets θ" in texts
    # Every point is drawn: 3 matches; gaps 4 A + 2 B + 1 + 1.
    assert sum(len(c.get_offsets()) for c in ax_sim.collections) == 3
    assert sum(len(c.get_offsets()) for c in ax_gap.collections) == 8
    gamma_lines = [ln for ln in ax_gap.get_lines() if list(ln.get_xdata()) == [0.15, 0.15]]
    assert len(gamma_lines) == 1
    out = distributions(
        t, op="ge", gamma=0.15, title="m", out_png=tmp_path / "d.png", out_svg=tmp_path / "d.svg"
    )
    assert png_size(out)[0] > 800
    svg_root(tmp_path / "d.svg")


def test_confidence_bars_are_the_category_shares(tmp_path):
    t = themes_table()
    fig = confidence_figure(t, op="ge", gamma=0.15, title="minilm")
    ax = fig.axes[0]
    labels = [x.get_text().replace("\n", " ") for x in ax.get_yticklabels()]
    assert labels[0] == "human vs llm: A = human (4)" and labels[1] == "human vs llm: B = llm (2)"
    bars = {}
    for p in ax.patches:
        y = round(p.get_y() + p.get_height() / 2)
        bars.setdefault(y, []).append(round(p.get_width(), 6))
    # A of human vs llm: 2 confident unique, 1 ambiguous, 1 no good match.
    assert bars[0] == [0.5, 0.25, 0.25]
    assert bars[1] == [0.5, 0.5] and bars[2] == [1.0] and bars[3] == [1.0]
    assert sum(bars[0]) == pytest.approx(1.0)
    legend = [x.get_text() for x in fig.legends[0].get_texts()]
    assert legend[0] == "confident unique (best S ≥ 0.5, gap ≥ 0.15)"
    out = confidence_profile(
        t, op="ge", gamma=0.15, title="m", out_png=tmp_path / "c.png", out_svg=tmp_path / "c.svg"
    )
    assert png_size(out)[1] > 300
    svg_root(tmp_path / "c.svg")


def test_pca_2d_by_hand():
    # Points on a line along (1, 1, 0): all variance on PC1, distances kept.
    X = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [3.0, 3.0, 0.0]])
    coords, ratio = pca_2d(X)
    assert ratio == pytest.approx([1.0, 0.0])
    assert coords[:, 1] == pytest.approx([0, 0, 0], abs=1e-12)
    d = np.sqrt(2)
    # Centred at the mean (4/3 along the line); sign fixed: largest loading positive.
    assert coords[:, 0] == pytest.approx([-4 / 3 * d, -1 / 3 * d, 5 / 3 * d])
    coords2, _ = pca_2d(-X)  # mirrored input: coordinates flip with it
    assert coords2[:, 0] == pytest.approx(-coords[:, 0])
    assert pca_2d(np.ones((1, 3)))[0].tolist() == [[0.0, 0.0]]


def test_theme_map_joins_matched_pairs(tmp_path):
    points = pd.DataFrame(
        {
            "set": ["human", "human", "llm", "llm", "llm2"],
            "theme_id": ["H0", "H1", "L0", "L1", "M0"],
            "x": [0.0, 1.0, 0.1, 1.2, -1.0],
            "y": [0.0, 1.0, 0.2, 0.8, 0.5],
        }
    )
    links = pd.DataFrame(
        {"set_a": ["human", "human"], "a_id": ["H0", "H1"], "set_b": ["llm", "llm"],
         "b_id": ["L0", "L1"]}
    )  # fmt: skip
    fig = theme_map_figure(points, links, explained=[0.4, 0.25], title="minilm")
    ax = fig.axes[0]
    lines = [ln for ln in ax.get_lines()]
    assert [(list(ln.get_xdata()), list(ln.get_ydata())) for ln in lines] == [
        ([0.0, 0.1], [0.0, 0.2]),
        ([1.0, 1.2], [1.0, 0.8]),
    ]
    assert [len(c.get_offsets()) for c in ax.collections] == [2, 2, 1]  # one scatter per set
    # ids prefixed by the set's number in the legend: T01 of two runs stay apart
    assert {t.get_text() for t in ax.texts} == {"1:H0", "1:H1", "2:L0", "2:L1", "3:M0"}
    assert ax.get_legend_handles_labels()[1][:3] == ["1: human (2)", "2: llm (2)", "3: llm2 (1)"]
    assert ax.get_xlabel() == "PC1 (40 % of variance)"
    out = theme_map(
        points, links, explained=[0.4, 0.25], title="m", out_png=tmp_path / "m.png",
        out_svg=tmp_path / "m.svg",
    )  # fmt: skip
    w, h = png_size(out)
    assert 600 < w < 2000 and 600 < h < 2000
    svg_root(tmp_path / "m.svg")


def test_runs_heatmap_labels_and_score(tmp_path):
    M = np.array([[1.0, 0.6, 0.4], [0.6, 1.0, 0.8], [0.4, 0.8, 1.0]])
    fig = runs_heatmap_figure(
        ["r1", "r2", "r3"], M, ncs=[0.75, 0.85, 0.8], score=0.6, title="minilm"
    )
    ax = fig.axes[0]
    assert "run consistency (mean off-diagonal) = 0.600" in fig.get_suptitle()
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "r1 (NCS 0.75)",
        "r2 (NCS 0.85)",
        "r3 (NCS 0.80)",
    ]
    assert [t.get_text() for t in ax.texts][:3] == ["1.00", "0.60", "0.40"]
    with pytest.raises(ValueError, match="3 run names"):
        runs_heatmap_figure(["a", "b", "c"], np.eye(2), score=0.5, title="t")
    out = runs_heatmap(
        ["r1", "r2", "r3"], M, score=0.6, title="m", out_png=tmp_path / "r.png",
        out_svg=tmp_path / "r.svg",
    )  # fmt: skip
    assert png_size(out)[0] > 500
    svg_root(tmp_path / "r.svg")


def test_cjk_and_emoji_names_draw_with_a_fallback_font(tmp_path):
    # Regression (issue 15): CJK glyphs and emoji drew as empty boxes ("missing from font").
    import warnings

    from themesim.report.fonts import font_family

    family = font_family()
    cjk = [f for f in family if "CJK" in f or "WenQuanYi" in f or "Droid" in f]
    if not cjk:
        pytest.skip("no CJK font installed: `make fonts` installs Debian's fonts-wqy-microhei")
    names = ["照顾父母", "家庭经济压力"] + (["Care 😀"] if "Symbola" in family else [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        heatmap(
            matrix(len(names), 2),
            ThemeAxis(names),
            ThemeAxis(["工作", "睡眠"]),
            cutoff=Cutoff(0.5, "ge"),
            title="人类 vs LLM",
            out_png=tmp_path / "cjk.png",
        )
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    assert not missing, missing
    assert family[0] == "DejaVu Sans" and cjk[0] in family


def _z_heatmap(tmp_path, monkeypatch, S, W: dict, ids: dict):
    """The heatmap figure the heatmap rule draws for h vs l of a scale: z method."""
    from themesim.metrics.thresholds import FROM_CONFIG, Thresholds
    from themesim.similarity import write_similarity
    from themesim.steps import plots as steps_plots

    themes, within = {}, {}
    for s, names in ids.items():
        names_shown = [f"theme {x}" for x in names]
        themes[s] = write_theme_set(tmp_path / f"{s}.parquet", s, names, names_shown)
        within[s] = tmp_path / f"{s}__vs__{s}.parquet"
        write_similarity(within[s], W[s], names, names, {})
    write_similarity(tmp_path / "h__vs__l.parquet", S, ids["h"], ids["l"], {})
    figures = []

    def capture(*args, out_png, out_svg=None, **kw):
        figures.append(heatmap_figure(*args, **kw))

    monkeypatch.setattr(steps_plots, "heatmap", capture)  # where the step looks it up
    z = Thresholds(values=[2.0], sources=[FROM_CONFIG], scale="z", clamp=False, op="ge")
    files = steps_plots.HeatmapFiles(("h", "l"), tmp_path / "h__vs__l.parquet", "x.png")
    steps_plots.draw_heatmaps("m", [files], themes, z, {"within": within})
    (fig,) = figures
    return fig


def test_heatmap_outlines_follow_the_z_scale_decisions(tmp_path, monkeypatch):
    """Under scale: z the outlined pairs are the z decisions of the metric tables, not raw."""
    from themesim.metrics.sets.scales import decision_changes, z_scale

    ids = {"h": ["a0", "a1", "a2", "a3"], "l": ["b0", "b1", "b2", "b3"]}
    S = np.array(
        [[0.62, 0.30, 0.20, 0.10], [0.25, 0.55, 0.20, 0.15],
         [0.20, 0.15, 0.58, 0.60], [0.10, 0.20, 0.45, 0.35]]
    )  # fmt: skip
    W = {
        "h": np.array(
            [[1, 0.2, 0.3, 0.1], [0.2, 1, 0.25, 0.15], [0.3, 0.25, 1, 0.2], [0.1, 0.15, 0.2, 1]]
        ),
        "l": np.array(
            [[1, 0.3, 0.2, 0.3], [0.3, 1, 0.1, 0.4], [0.2, 0.1, 1, 0.25], [0.3, 0.4, 0.25, 1]]
        ),
    }
    # The metric tables' decisions: raw θ 0.5 keeps a1:b1, z θ 2 drops it and keeps a3:b2.
    Z, flag = z_scale(S, W["h"], W["l"])
    dc = decision_changes(S, (Z, flag), [0.5], [2.0], "ge", ids["h"], ids["l"]).iloc[0]
    assert (dc["only_raw_pairs"], dc["only_z_pairs"], dc["n_both"]) == ("a1:b1", "a3:b2", 2)
    z_kept = {("a0", "b0"), ("a2", "b3"), ("a3", "b2")}

    fig = _z_heatmap(tmp_path, monkeypatch, S, W, ids)
    ax = fig.axes[0]
    rows = [t.get_text().split()[0] for t in ax.get_yticklabels()]
    cols = [t.get_text().split()[0] for t in ax.get_xticklabels()]

    def cell(p, inset):
        x, y = p.get_xy()
        return rows[round(y + inset)], cols[round(x + inset)]

    matched = {
        cell(p, 0.42) for p in ax.patches if p.get_linewidth() > 2 and p.get_linestyle() == "solid"
    }
    assert matched == z_kept
    # Thin black outlines: every cell with z >= 2, on the z values the cells show.
    meets = {cell(p, 0.5) for p in ax.patches if p.get_edgecolor()[:3] == (0.0, 0.0, 0.0)}
    assert meets == {(ids["h"][i], ids["l"][j]) for i, j in np.argwhere(Z >= 2.0)}
    assert ("a1", "b1") not in meets and ("a3", "b2") in meets  # raw 0.55 kept; raw 0.45 not
    assert ax.child_axes[0].get_ylabel() == "within-set z"  # the colour bar
    assert fig.legends[0].get_texts()[0].get_text() == "z ≥ 2 (meets threshold)"


def test_heatmap_of_an_undefined_z_marks_no_pair_and_says_why(tmp_path, monkeypatch):
    # Three themes a set: fewer than 3 others, no spread; the metrics flag it and score nothing.
    ids = {"h": ["a0", "a1", "a2"], "l": ["b0", "b1", "b2"]}
    W = np.array([[1, 0.2, 0.3], [0.2, 1, 0.25], [0.3, 0.25, 1]])
    S = np.array([[0.9, 0.1, 0.2], [0.1, 0.8, 0.2], [0.2, 0.1, 0.7]])
    fig = _z_heatmap(tmp_path, monkeypatch, S, {"h": W, "l": W}, ids)
    ax = fig.axes[0]
    assert not [p for p in ax.patches if p.get_linewidth() > 2]  # no Hungarian pair
    assert not ax.patches  # no cell meets a z that is not defined
    assert "z undefined (a:too_small;b:too_small): not scored" in ax.get_title()


def test_method_matrix_puts_scores_on_the_calibrated_and_angular_scales():
    from themesim.metrics.method_scale import method_matrix, scale_label

    fit = pd.DataFrame({"score": [0.2, 0.6], "p_match": [0.0, 1.0]})
    S = np.array([[0.4, 0.1], [0.7, 0.5]])
    P, flag = method_matrix(S, scale="calibrated", fit=fit)
    # Linear between the fit's points, flat beyond them: 0.4 -> 0.5, 0.5 -> 0.75.
    np.testing.assert_allclose(P, [[0.5, 0.0], [1.0, 0.75]])
    assert flag == "" and scale_label("calibrated") == "P(match) (calibrated scale)"
    A, _ = method_matrix(np.array([[1.0, 0.0, -0.5]]), scale="angular", clamp=True)
    np.testing.assert_allclose(A, [[1.0, 0.5, 0.5]])  # clamped to [0, 1], then 1 - acos/π
    with pytest.raises(ValueError, match="within-set"):
        method_matrix(S, scale="z")


def _f1_table(f1: dict) -> pd.DataFrame:
    """comparisons.csv rows: each pair at thresholds 0.5 (the given F1) and 0.7 (0)."""
    rows = []
    for (a, b), f in f1.items():
        rows.append({"set_a": a, "set_b": b, "threshold": 0.5, "hungarian_f1": f})
        rows.append({"set_a": a, "set_b": b, "threshold": 0.7, "hungarian_f1": 0.0})
    return pd.DataFrame(rows)


def test_pairs_overview_clusters_the_most_similar_sets_together(tmp_path):
    from themesim.report.plots.pairs_overview import pairs_overview, pairs_overview_figure

    # a~c (0.9) and b~d (0.8) agree; every other pair barely (0.1-0.2). Given order a,b,c,d.
    f1 = {
        ("a", "b"): 0.1,
        ("a", "c"): 0.9,
        ("a", "d"): 0.2,
        ("b", "c"): 0.15,
        ("b", "d"): 0.8,
        ("c", "d"): 0.1,
    }
    fig, names, F = pairs_overview_figure(_f1_table(f1), threshold=0.5, title="t")
    assert sorted(names) == ["a", "b", "c", "d"]
    pos = {s: k for k, s in enumerate(names)}
    assert abs(pos["a"] - pos["c"]) == 1 and abs(pos["b"] - pos["d"]) == 1
    # Symmetric, blank diagonal, first threshold's values in the clustered order.
    assert np.isnan(np.diag(F)).all()
    np.testing.assert_array_equal(F, F.T)
    for (x, y), f in f1.items():
        assert F[pos[x], pos[y]] == f
    # Tick labels are the set names in that order.
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == names
    out = pairs_overview(
        _f1_table(f1),
        threshold=0.5,
        title="t",
        out_png=tmp_path / "o.png",
        out_svg=tmp_path / "o.svg",
    )
    w, h = png_size(out)
    assert 300 < w < 3000 and 300 < h < 3000
    assert (tmp_path / "o.svg").stat().st_size > 0


def test_pairs_overview_of_100_sets_stays_readable(tmp_path):
    from themesim.report.plots.pairs_overview import pairs_overview

    rng = np.random.default_rng(0)
    sets = [f"set{i:03d}" for i in range(100)]
    f1 = {(a, b): float(rng.uniform()) for i, a in enumerate(sets) for b in sets[i + 1 :]}
    out = pairs_overview(_f1_table(f1), threshold=0.5, title="t", out_png=tmp_path / "o.png")
    w, h = png_size(out)
    # Every set keeps its own row: about 22 px per row at 150 dpi, not a giant canvas.
    assert 2000 < w < 3500 and 2000 < h < 3500
