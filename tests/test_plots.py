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
from PIL import Image

from themesim import plots

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
    wrapped = plots.wrap_label(long)
    lines = wrapped.split("\n")
    assert len(lines) == 2
    assert all(len(line) <= plots.LABEL_WIDTH for line in lines)
    assert lines[0].startswith("H03 ")
    assert lines[1].endswith("…")
    assert plots.wrap_label("H01 Short") == "H01 Short"


def test_theme_label_prefixes_id_once():
    assert plots.theme_label("H03", "Guilt and obligation") == "H03 Guilt and obligation"
    assert plots.theme_label("H03", "H03 Guilt") == "H03 Guilt"
    assert plots.theme_label(None, "Guilt") == "Guilt"


# ---------------------------------------------------------------------------
# heatmap


def test_heatmap_writes_png_that_grows_with_matrix(tmp_path):
    small = plots.heatmap(
        matrix(3, 4),
        labels("A", 3),
        labels("B", 4),
        threshold=0.5,
        op="ge",
        title="human vs llm (minilm)",
        out_png=tmp_path / "small.png",
        pairs=[(0, 0), (1, 2)],
    )
    big = plots.heatmap(
        matrix(22, 20),
        labels("A", 22),
        labels("B", 20),
        threshold=0.5,
        op="gt",
        title="human vs llm (minilm)",
        out_png=tmp_path / "sub" / "big.png",
        pairs=[(i, i) for i in range(20)],
        a_ids=[f"H{i:02d}" for i in range(22)],
        b_ids=[f"L{i:02d}" for i in range(20)],
    )
    assert small == tmp_path / "small.png" and big == tmp_path / "sub" / "big.png"
    sw, sh = png_size(small)
    bw, bh = png_size(big)
    # ~0.5 in per cell at 150 dpi plus margins for labels.
    assert 500 < sw < 1600 and 400 < sh < 1400
    assert bw > sw + 1000 and bh > sh + 1000
    assert bw < 4000 and bh < 4000


def test_heatmap_is_byte_identical_across_runs(tmp_path):
    kwargs = dict(threshold=0.6, op="ge", title="t", pairs=np.array([[1, 1], [2, 3]]))
    one = plots.heatmap(
        matrix(5, 6), labels("A", 5), labels("B", 6), out_png=tmp_path / "1.png", **kwargs
    )
    two = plots.heatmap(
        matrix(5, 6), labels("A", 5), labels("B", 6), out_png=tmp_path / "2.png", **kwargs
    )
    assert one.read_bytes() == two.read_bytes()
    assert b"matplotlib" not in one.read_bytes().lower()  # no Software stamp


def _heatmap_texts(fig):
    ax = fig.axes[0]
    return [t.get_text() for t in ax.texts]


def test_heatmap_annotations_outlines_and_pairs():
    S = np.array([[0.9, 0.5, 0.1], [0.5, 0.49, 0.75]])
    fig = plots.heatmap_figure(
        S, ["a0", "a1"], ["b0", "b1", "b2"], threshold=0.5, op="ge", title="t", pairs=[(0, 0)]
    )
    ax = fig.axes[0]
    assert _heatmap_texts(fig) == ["0.90", "0.50", "0.10", "0.50", "0.49", "0.75"]
    rects = [p for p in ax.patches if p.get_edgecolor()[:3] == (0.0, 0.0, 0.0)]
    assert len(rects) == 4  # cells with S >= 0.5
    pair_rects = [p for p in ax.patches if p.get_linewidth() > 2]
    assert len(pair_rects) == 1 and pair_rects[0].get_xy() == pytest.approx((-0.42, -0.42))
    # An assigned pair below the threshold is drawn dashed: it is not a match.
    fig2 = plots.heatmap_figure(
        S,
        ["a0", "a1"],
        ["b0", "b1", "b2"],
        threshold=0.5,
        op="ge",
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
    fig_gt = plots.heatmap_figure(
        S, ["a0", "a1"], ["b0", "b1", "b2"], threshold=0.5, op="gt", title="t"
    )
    assert len(fig_gt.axes[0].patches) == 2


def test_heatmap_skips_annotations_above_25():
    fig = plots.heatmap_figure(
        matrix(26, 4), labels("A", 26), labels("B", 4), threshold=0.5, op="ge", title="t"
    )
    assert _heatmap_texts(fig) == []


def test_heatmap_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="3 A labels"):
        plots.heatmap(
            matrix(2, 2),
            ["a"] * 3,
            ["b"] * 2,
            threshold=0.5,
            op="ge",
            title="t",
            out_png=tmp_path / "x.png",
        )
    with pytest.raises(ValueError, match="op must be"):
        plots.heatmap(
            matrix(2, 2),
            ["a"] * 2,
            ["b"] * 2,
            threshold=0.5,
            op="le",
            title="t",
            out_png=tmp_path / "x.png",
        )


def test_heatmap_empty_set_does_not_crash(tmp_path):
    out = plots.heatmap(
        np.zeros((0, 3)),
        [],
        labels("B", 3),
        threshold=0.5,
        op="ge",
        title="t",
        out_png=tmp_path / "e.png",
    )
    assert png_size(out)[0] > 100


# ---------------------------------------------------------------------------
# sweeps


def test_sweep_curves_panels_lines_and_thresholds(tmp_path):
    comps = [("human", "llm1"), ("human", "llm2"), ("llm1", "llm2"), ("human", "llm3")]
    sweep = sweep_table("minilm", comps)
    fig = plots.sweep_curves_figure(sweep, thresholds=[0.5, 0.7], title="minilm")
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
    hungarian = next(ln for ln in metric_lines if ln.get_label().startswith("Hungarian"))
    expected = sweep[(sweep.set_a == "human") & (sweep.set_b == "llm1")]["hungarian_f1"].to_numpy()
    assert np.allclose(hungarian.get_ydata(), expected)

    out = plots.sweep_curves(
        sweep, thresholds=[0.5, 0.7], title="minilm", out_png=tmp_path / "s.png"
    )
    w, h = png_size(out)
    assert w > h > 300


def test_sweep_curves_missing_column_is_clear():
    with pytest.raises(ValueError, match="true_jaccard"):
        plots.sweep_curves_figure(
            sweep_table("m", [("a", "b")]).drop(columns="true_jaccard"), thresholds=[], title="t"
        )


def test_methods_side_by_side_one_panel_per_method_never_averaged(tmp_path):
    sweeps = {
        "minilm": sweep_table("minilm", [("human", "llm1"), ("human", "llm2")], seed=1),
        "mpnet": sweep_table("mpnet", [("human", "llm1"), ("human", "llm2")], seed=2),
        "tfidf": sweep_table("tfidf", [("human", "llm1")], seed=3),
    }
    thresholds = {"minilm": [0.5], "mpnet": [0.6, 0.7], "tfidf": [0.3]}
    fig = plots.methods_side_by_side_figure(sweeps, thresholds=thresholds)
    assert [ax.get_title() for ax in fig.axes] == ["minilm", "mpnet", "tfidf"]
    assert len({ax.get_ylim() for ax in fig.axes}) == 1  # same y-scale
    for ax, (name, df) in zip(fig.axes, sweeps.items(), strict=True):
        curves = {ln.get_label(): ln for ln in ax.get_lines() if len(ln.get_xdata()) == 101}
        assert set(curves) == {f"{a} vs {b}" for a, b in zip(df.set_a, df.set_b, strict=True)}
        # Each curve is exactly this method's values: nothing pooled across methods.
        own = df[(df.set_a == "human") & (df.set_b == "llm1")]["hungarian_f1"].to_numpy()
        assert np.allclose(curves["human vs llm1"].get_ydata(), own)
        vlines = [float(ln.get_xdata()[0]) for ln in ax.get_lines() if len(ln.get_xdata()) == 2]
        assert vlines == thresholds[name]
    # Same comparison, same colour in every panel.
    colours = {
        ax.get_title(): next(
            ln.get_color() for ln in ax.get_lines() if ln.get_label() == "human vs llm1"
        )
        for ax in fig.axes
    }
    assert len(set(colours.values())) == 1

    out = plots.methods_side_by_side(
        sweeps, thresholds=thresholds, metric="true_jaccard", out_png=tmp_path / "m.png"
    )
    w, h = png_size(out)
    assert w > 2 * h


def test_methods_side_by_side_rejects_no_methods(tmp_path):
    with pytest.raises(ValueError, match="no methods"):
        plots.methods_side_by_side({}, thresholds={}, out_png=tmp_path / "m.png")


def test_plotting_never_imports_pyplot(tmp_path):
    # Own Agg canvas: no pyplot global state, whatever backend the user has.
    out = tmp_path / "p.png"
    code = (
        "import sys, numpy as np; from themesim import plots; "
        "plots.heatmap(np.eye(2), ['a', 'b'], ['c', 'd'], threshold=0.5, op='ge', title='t', "
        f"out_png=r'{out}'); "
        "assert 'matplotlib.pyplot' not in sys.modules"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(plots.__file__).parents[1])}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert png_size(out)[0] > 100
