"""thresholds.csv: a method's thresholds and scale, resolved once by its metrics job and read
by the plots, grounding and report (metrics/thresholds.py)."""

import numpy as np
import pandas as pd
from helpers import comparison_row, write_method, write_theme_set, write_thresholds

from themesim.io.files import write_csv
from themesim.metrics.calibration import resolve_thresholds
from themesim.metrics.thresholds import (
    FROM_CALIBRATION,
    FROM_CONFIG,
    THRESHOLD_COLUMNS,
    read_thresholds,
    threshold_table,
)


def test_a_calibrated_threshold_is_kept_to_the_last_digit(tmp_path):
    """Rows in configured order; a calibrated θ survives the CSV exactly (write_csv's 10
    digits would move it off the score it was fitted at)."""
    theta = 0.61234567891234567
    values, sources = resolve_thresholds(["calibrated", 0.5], {"f1_threshold": theta})
    path = tmp_path / "thresholds.csv"
    write_csv(threshold_table("minilm", values, sources, "gt", "cosine", False), path)
    table = pd.read_csv(path)
    assert list(table.columns) == THRESHOLD_COLUMNS
    assert table["source"].tolist() == [FROM_CALIBRATION, FROM_CONFIG]
    t = read_thresholds(path)
    assert t.values == [theta, 0.5] and t.first == theta  # exact, not 0.6123456789
    assert t.calibrated() == [True, False] and (t.scale, t.clamp) == ("cosine", False)
    assert t.op == "gt" and table["op"].tolist() == ["gt", "gt"]


def test_a_table_without_op_or_with_an_unknown_op_is_named(tmp_path):
    """A thresholds.csv without its op (or with a wrong one) stops its reader with the file's
    name and what to do, never a silent default."""
    import pytest

    path = write_thresholds(tmp_path / "thresholds.csv", "m", [0.5])
    table = pd.read_csv(path)
    table.drop(columns="op").to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"thresholds\.csv: no column op.*run the workflow"):
        read_thresholds(path)
    table.assign(op="le").to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"thresholds\.csv: op must be one of"):
        read_thresholds(path)


def test_one_rule_decides_a_match_for_every_part():
    """S op θ: ge takes the tie, gt does not, NaN matches nothing, θ broadcasts per row."""
    from themesim.metrics.thresholds import matches

    S = np.array([[0.5, 0.49, np.nan], [0.7, 0.5, 0.2]])
    assert matches(S, 0.5, "ge").tolist() == [[True, False, False], [True, True, False]]
    assert matches(S, 0.5, "gt").tolist() == [[False, False, False], [True, False, False]]
    assert matches(S, np.array([[0.4], [0.6]]), "ge").tolist() == [
        [True, True, False],
        [True, False, False],
    ]


def test_the_plots_read_threshold_and_scale_from_the_table(tmp_path, monkeypatch):
    """The heatmap is drawn at the table's first θ, with its op, on the table's scale, the
    sweep marks every θ of the table: the plot steps are given no threshold of the config."""
    from themesim.report.plots import sweep
    from themesim.similarity import write_similarity
    from themesim.steps import plots as steps_plots
    from themesim.steps.job import Job
    from themesim.steps.plots import comparison_heatmap
    from themesim.steps.report_parts import MethodTables, method_figure

    ids = {"h": ["a0", "a1"], "l": ["b0", "b1"]}
    themes = {s: write_theme_set(tmp_path / f"{s}.parquet", s, names) for s, names in ids.items()}
    write_similarity(tmp_path / "s.parquet", np.array([[0.9, 0.1], [0.2, 0.7]]), *ids.values(), {})
    thresholds = write_thresholds(
        tmp_path / "thresholds.csv",
        "m",
        [0.6123, 0.4],
        op="gt",
        scale="angular",
        sources=[FROM_CALIBRATION, FROM_CONFIG],
    )
    table = write_method(tmp_path, "m", [comparison_row("m", "h", "l", 0.4)], with_heatmap=False)
    seen = {}
    # where the steps look them up
    monkeypatch.setattr(steps_plots, "heatmap", lambda *a, **kw: seen.update(heatmap=kw))
    monkeypatch.setattr(sweep, "sweep_curves", lambda *a, **kw: seen.update(sweep=kw))
    comparison_heatmap(
        Job(
            input={"thresholds": thresholds, "themes": themes},
            params={
                "method": "m",
                "pair": ("h", "l"),
                "similarity": tmp_path / "s.parquet",
                "scale": {},
            },
            output={"png": tmp_path / "h.png"},
        )
    )
    tables = MethodTables(
        method="m",
        themes_csv=table["themes_csv"],
        sweep_csv=table["sweep_csv"],
        thresholds_csv=thresholds,
        gamma=0.15,
        reference=None,
        max_panels=None,
    )
    method_figure(stem="sweep", tables=tables, out_png=tmp_path / "sweep.png")
    cutoff = seen["heatmap"]["cutoff"]
    assert cutoff.threshold == 0.6123 and cutoff.op == "gt"
    assert cutoff.label == "angular similarity"
    assert seen["sweep"]["thresholds"].values == [0.6123, 0.4]
    assert seen["sweep"]["thresholds"].op == "gt"


def test_the_report_names_the_tables_thresholds_and_scale(tmp_path):
    from themesim.report.views import method_view

    spec = write_method(tmp_path, "m", [comparison_row("m", "h", "l", 0.6123456789)])
    write_thresholds(
        spec["thresholds_csv"],
        "m",
        [0.61234567891234567],
        op="gt",
        scale="calibrated",
        sources=[FROM_CALIBRATION],
    )
    view = method_view("m", spec, tmp_path, tmp_path)
    assert view["op"] == "gt" and view["first_threshold"] == "> 0.612346"
    assert view["thresholds"] == "0.612346 (calibrated)"
    assert view["scale"] == "calibrated P(match)" and view["clamp"] is False
    assert view["first_theta"] == 0.61234567891234567


def test_only_the_metrics_job_takes_the_op_from_the_config():
    """The op travels as the thresholds do: the metrics job's settings are the one place the
    config's op is read (inputs/methods.op); every other rule reads thresholds.csv."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    files = [*root.glob("workflow/rules/*.smk"), *root.glob("src/themesim/**/*.py")]
    files += [*root.glob("scripts/*.py")]
    readers = sorted(
        str(f.relative_to(root))
        for f in files
        if f.name != "methods.py" and re.search(r"\bmethods\.op\(", f.read_text(encoding="utf-8"))
    )
    assert readers == ["src/themesim/inputs/metrics.py"]
    assert not [f.name for f in root.glob("scripts/*.py") if "params.op" in f.read_text()]
