"""Figures of report/threshold_plots.py: what they draw is the data given."""

import numpy as np
import pandas as pd

from themesim.metrics.calibration import calibrate, isotonic_fit
from themesim.report.calibration_plot import calibration_figure
from themesim.report.threshold_plots import headline_intervals, headline_intervals_figure


def headline():
    rows = []
    for m, f1, lo, hi in (("minilm", 0.8, 0.6, 0.95), ("tfidf", 0.4, 0.2, 0.55)):
        for b, shift in (("llm", 0.0), ("llm2", -0.1)):
            rows.append(
                {
                    "method": m,
                    "set_a": "human",
                    "set_b": b,
                    "threshold": 0.5,
                    "hungarian_f1": f1 + shift,
                    "hungarian_f1_ci_low": lo + shift,
                    "hungarian_f1_ci_high": hi + shift,
                }
            )
    return pd.DataFrame(rows)


def test_one_panel_per_method_with_the_intervals_drawn():
    fig = headline_intervals_figure(headline())
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == ["minilm (θ 0.5)", "tfidf (θ 0.5)"]
    bars = [tuple(line.get_xdata()) for line in axes[1].get_lines() if len(line.get_xdata()) == 2]
    np.testing.assert_allclose(sorted(bars), [(0.1, 0.45), (0.2, 0.55)])
    dots = [line.get_xdata()[0] for line in axes[0].get_lines() if len(line.get_xdata()) == 1]
    np.testing.assert_allclose(dots, [0.8, 0.7])


def test_missing_interval_draws_only_the_dot(tmp_path):
    df = headline()
    df.loc[0, ["hungarian_f1_ci_low", "hungarian_f1_ci_high"]] = np.nan
    out = headline_intervals(df, out_png=tmp_path / "h.png", out_svg=tmp_path / "h.svg")
    assert out.stat().st_size > 5000 and (tmp_path / "h.svg").exists()
    axes = headline_intervals_figure(df).get_axes()
    assert sum(len(ln.get_xdata()) == 2 for ln in axes[0].get_lines()) == 1


def test_calibration_figure_has_three_panels():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 20)
    s = np.where(y == 1, rng.normal(0.7, 0.1, 40), rng.normal(0.4, 0.1, 40))
    summary = calibrate(s, y, n_boot=50)
    fig = calibration_figure(s, y, isotonic_fit(s, y), summary, "t")
    roc, rel, dist = fig.get_axes()
    assert roc.get_title().startswith(f"ROC, AUC {summary['auc']:.2f}")
    # Both thresholds are marked on the reliability and distribution panels.
    marks = [ln.get_xdata()[0] for ln in dist.get_lines()]
    assert summary["f1_threshold"] in marks and summary["youden_threshold"] in marks


def test_tables_workbook_one_sheet_per_table(tmp_path):
    from openpyxl import load_workbook

    from themesim.report.workbook import tables_workbook

    a = tmp_path / "a.csv"
    pd.DataFrame({"method": ["minilm"], "hungarian_f1": [0.75]}).to_csv(a, index=False)
    b = tmp_path / "b.csv"
    pd.DataFrame({"x": [1, 2]}).to_csv(b, index=False)
    long = "minilm+abtt-with-a-very-long-name comparisons"
    out = tmp_path / "tables.xlsx"
    tables_workbook(tables={"headline": a, long: b, long + " again": b}, out=out)
    wb = load_workbook(out)
    assert wb.sheetnames == ["sheets", "headline", long[:31], long[:29] + "~2"]
    assert [c.value for c in wb["headline"][2]] == ["minilm", 0.75]
    assert wb[long[:31]].max_row == 3  # header + 2 rows
    index = [[c.value for c in r] for r in wb["sheets"].iter_rows(min_row=2)]
    assert index[1][:2] == [long[:31], long]
    first = out.read_bytes()
    import time

    time.sleep(2.1)  # zip times have 2-second resolution
    tables_workbook(tables={"headline": a, long: b, long + " again": b}, out=out)
    assert out.read_bytes() == first  # byte-identical on rerun


def test_tables_workbook_leaves_a_large_table_to_its_csv(tmp_path):
    from openpyxl import load_workbook

    from themesim.report.workbook import tables_workbook

    small = tmp_path / "small.csv"
    pd.DataFrame({"f1": [0.5, float("nan")], "z": [float("inf"), -1.0]}).to_csv(small, index=False)
    large = tmp_path / "large.csv"
    pd.DataFrame({"a": range(3), "b": range(3)}).to_csv(large, index=False)
    out = tmp_path / "tables.xlsx"
    tables_workbook(tables={"small": small, "large": large}, out=out, max_cells=5)
    wb = load_workbook(out)
    assert wb.sheetnames == ["sheets", "small"]  # 3 rows x 2 columns = 6 cells > 5
    index = [[c.value for c in r] for r in wb["sheets"].iter_rows()]
    assert index[0] == ["sheet", "table", "file", "rows", "in_workbook"]
    assert index[1] == ["small", "small", str(small), 2, "yes"]
    assert index[2] == [None, "large", str(large), 3, "no: 3 rows; open the CSV"]
    # Missing values stay empty cells and infinities text: Excel has neither as a number.
    assert [[c.value for c in r] for r in wb["small"].iter_rows()] == [
        ["Coverage F1 (f1)", "z"],  # the report's name, the id beside it
        [0.5, "inf"],
        [None, -1],
    ]
