"""The report's opening verdicts: one sentence per method, comparison and threshold, written
from results/report/verdicts.csv (metrics/equivalence.py). Every number in a sentence is a
cell of that table, formatted as the report's tables are; methods are never pooled."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from themesim.report.format import _isnan, _text, fmt, fmt_int, fmt_threshold

VERDICT_TEXT_COLUMNS = ("method", "set_a", "set_b", "op", "role", "second_analyst", "metric")
VERDICT_TEXT_COLUMNS += ("verdict", "ci_method")


def _interval(lo, hi) -> str:
    return "" if _isnan(lo) or _isnan(hi) else f", 95 % CI {fmt(lo)}–{fmt(hi)}"


def _outcome(r) -> str:
    margin = fmt(r["margin"])
    return {
        "equivalent": f"equivalent within ±{margin}",
        "worse": f"worse: the whole interval lies below −{margin}",
        "not shown": f"equivalence within ±{margin} not shown",
    }[r["verdict"]]


def verdict_sentence(r) -> str:
    """The sentence of one row of verdicts.csv."""
    head = (
        f"θ {fmt_threshold(r['threshold'], r['op'])}: {r['set_b']} matches "
        f"{fmt_int(r['n_matched'])} of {fmt_int(r['n_a'])} {r['set_a']} themes one-to-one "
        f"({fmt(r['agreement'])}{_interval(r['agreement_ci_low'], r['agreement_ci_high'])}; "
        f"Hungarian F1 {fmt(r['hungarian_f1'])})"
    )
    analyst = _text(r["second_analyst"])
    if not analyst:
        if r["role"] != "compared":
            return f"{head}; {r['set_b']} is a second analyst of the reference group."
        return f"{head}."
    if _isnan(r["human_human"]):
        return (
            f"{head}; this method did not compare {r['set_a']} with the second analyst "
            f"{analyst} (its comparisons: setting), so there is no verdict."
        )
    human = (
        f"the second analyst {analyst} matches {fmt_int(r['human_n_matched'])} "
        f"({fmt(r['human_human'])}{_interval(r['human_human_ci_low'], r['human_human_ci_high'])})"
    )
    if not _text(r["verdict"]):
        return f"{head}; {human}; no paired difference: a comparison has no per-theme rows."
    level = f"{float(r['difference_ci_level']) * 100:g} % CI"
    diff = (
        f"difference {fmt(r['difference'])} [{fmt(r['difference_ci_low'])}, "
        f"{fmt(r['difference_ci_high'])}] ({level})"
    )
    return f"{head}; {human}. {diff[0].upper()}{diff[1:]}: {_outcome(r)}."


def verdict_view(path) -> dict | None:
    """{"methods": [{"name", "sentences"}], "grouped": bool} from verdicts.csv, or None when
    the report was not given one."""
    if path is None or str(path) == "" or not Path(path).is_file():
        return None
    df = read_verdicts(path)
    methods = []
    for method in dict.fromkeys(df["method"]):
        mine = df[df["method"] == method]
        # a method that ran only the human-human comparison still says what it found
        compared = mine[mine["role"] == "compared"]
        rows = (compared if not compared.empty else mine).to_dict("records")
        methods.append({"name": method, "sentences": [verdict_sentence(r) for r in rows]})
    grouped = bool((df["second_analyst"].astype(str) != "").any())
    return {"methods": methods, "grouped": grouped}


def read_verdicts(path) -> pd.DataFrame:
    """verdicts.csv with its text columns as text (theme set names like "NA" stay names)."""
    from themesim.metrics.equivalence import VERDICT_COLUMNS
    from themesim.report.tables import _read_table

    return _read_table(path, "verdicts CSV", VERDICT_COLUMNS, VERDICT_TEXT_COLUMNS)
