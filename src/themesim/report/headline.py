"""The headline table for a paper: headline.csv (full precision) and headline.tex (booktabs)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from themesim.io.files import atomic_path
from themesim.metrics.registry import AT_A_GLANCE
from themesim.metrics.sets.ceiling import CEILING_COLUMNS
from themesim.report.format import fmt_threshold, is_missing
from themesim.report.tables import (
    COMPARISON_COLUMNS,
    TEXT_COLUMNS,
    only_method,
    read_table,
    sorted_records,
    write_text,
)

# The verdict of the set's generator on the study's primary comparison (results/report/
# verdicts.csv, `primary` true): on the rows of the primary method and threshold, `human_human`
# is the analysts' agreement with each other, `difference` and its (1 - 2 alpha) interval the
# generator's against it, `second_analyst` the other analysts; NaN and empty elsewhere.
VERDICT_HEADLINE = [
    "second_analyst", "human_human", "difference", "difference_ci_low", "difference_ci_high",
    "verdict",
]  # fmt: skip
_VERDICT_TEXT = ("second_analyst", "verdict")

# The headline table for a paper (CSV and LaTeX), in the seed's recommended order (the
# registry's at-a-glance columns); the report's at-a-glance table shows exactly these rows.
HEADLINE_COLUMNS = [
    "method", "set_a", "set_b", "threshold", "op", *AT_A_GLANCE, *VERDICT_HEADLINE,
]  # fmt: skip


def _with_verdicts(frame: pd.DataFrame, verdicts: pd.DataFrame | None) -> pd.DataFrame:
    """VERDICT_HEADLINE of each row from its generator's primary verdict (each run of a run
    group carries its group's), on the primary method and threshold only."""
    frame = frame.copy()
    for col in VERDICT_HEADLINE:
        frame[col] = "" if col in _VERDICT_TEXT else float("nan")
    if verdicts is None or verdicts.empty or frame.empty:
        return frame
    prim = verdicts[verdicts["primary"].astype(str).str.lower() == "true"]
    rows = []
    for r in prim.to_dict("records"):
        for run in str(r["generator_runs"]).split(", "):
            rows.append(r | {"set_b": run})
    mine = pd.DataFrame(rows, columns=list(verdicts.columns))
    key = ["method", "set_a", "set_b", "threshold"]
    merged = frame[key].merge(mine[key + VERDICT_HEADLINE], on=key, how="left")
    for col in VERDICT_HEADLINE:
        values = merged[col]
        frame[col] = (values.fillna("") if col in _VERDICT_TEXT else values).to_numpy()
    return frame


def headline_frame(
    comparisons: Mapping[str, object], verdicts: pd.DataFrame | None = None
) -> pd.DataFrame:
    """HEADLINE_COLUMNS of every method's comparisons.csv, in the report's row order, and the
    paraphrase ceiling's columns when some method has them (`ceiling.active`); verdicts:
    verdicts.csv (steps.verdicts), whose generators' primary words the rows carry
    (VERDICT_HEADLINE, empty without one)."""
    frames, columns = [], list(HEADLINE_COLUMNS)
    for method, path in comparisons.items():
        comp = read_table(
            path, f"comparisons CSV of method {method!r}", COMPARISON_COLUMNS, TEXT_COLUMNS
        )
        comp = only_method(comp, method, path, "comparisons CSV")
        if all(c in comp.columns for c in CEILING_COLUMNS) and CEILING_COLUMNS[0] not in columns:
            columns += CEILING_COLUMNS
        frames.append(pd.DataFrame(sorted_records(comp), columns=list(comp.columns)))
    if not frames:
        return pd.DataFrame(columns=columns)
    # Without bootstrap, null model or ceiling their columns are absent: NaN, never made up.
    frames = [_with_verdicts(f, verdicts) for f in frames]
    return pd.concat([f.reindex(columns=columns) for f in frames], ignore_index=True)


HEADLINE_TEX_BASE = "llrrlrrlrrrr"  # the 12 columns every headline.tex has

_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_TEX_RE = re.compile("|".join(re.escape(k) for k in _TEX_SPECIAL))


def tex_escape(text) -> str:
    """User text (method and set names) safe inside a LaTeX table cell."""
    return _TEX_RE.sub(lambda m: _TEX_SPECIAL[m.group(0)], str(text))


def _tex_num(x) -> str:
    return "--" if is_missing(x) else f"{float(x):.3f}"


def _tex_signed(x) -> str:
    """A number that may be negative, in math mode (a minus sign, not a hyphen)."""
    return "--" if is_missing(x) else f"${float(x):.3f}$"


def _tex_bracket(lo, hi) -> str:
    """[lo, hi] of a signed quantity: a dash between negative ends would read as a minus."""
    return "--" if is_missing(lo) or is_missing(hi) else f"$[{float(lo):.3f}, {float(hi):.3f}]$"


def _tex_range(lo, hi) -> str:
    return "--" if is_missing(lo) or is_missing(hi) else f"{_tex_num(lo)}--{_tex_num(hi)}"


def glance_numbers(r: Mapping, num, span, bound: str = "") -> list[str]:
    """A headline row's numbers in the order headline.tex and the report's at-a-glance table
    show them (the same numbers, each table in its own format): `num` formats a number, `span`
    a range (lo, hi); `bound` follows the Hungarian F1 interval (the report's note that it
    meets the most the set sizes allow)."""
    return [
        num(r["hungarian_f1"]),
        span(r.get("hungarian_f1_ci_low"), r.get("hungarian_f1_ci_high")) + bound,
        num(r["f1"]),
        num(r["matched_sim_median"]),
        span(r["matched_sim_q1"], r["matched_sim_q3"]),
        num(r["hungarian_coverage_a"]),
        num(r["hungarian_coverage_b"]),
        num(r["raza_jaccard"]),
        num(r.get("significant_match_rate")),
    ]


def headline_tex(df: pd.DataFrame, notes=()) -> str:
    """A booktabs tabular of the headline table (3 decimals, as in the HTML report); the
    human-human columns only when some row has a verdict (`reference_group`)."""
    ceiling = "ceiling_median" in df.columns  # the paraphrase ceiling ran
    verdicts = "verdict" in df.columns and bool((df["verdict"].fillna("") != "").any())
    n_cols = 12 + (3 if ceiling else 0) + (4 if verdicts else 0)
    head_groups = [
        r" & & & \multicolumn{2}{c}{Hungarian $F_1$} & Coverage"
        r" & \multicolumn{2}{c}{Matched similarity}"
        r" & \multicolumn{2}{c}{Hungarian coverage} & Raza Jaccard & Significant"
    ]
    rules = r"\cmidrule(lr){4-5}\cmidrule(lr){7-8}\cmidrule(lr){9-10}"
    names = (
        r"Method & Comparison & $\theta$ & value & 95\,\% CI & $F_1$ & median & IQR & A & B"
        r" & (for comparison) & match rate"
    )
    col = len(HEADLINE_TEX_BASE)
    if ceiling:
        head_groups.append(r" & \multicolumn{3}{c}{Paraphrase ceiling}")
        rules += rf"\cmidrule(lr){{{col + 1}-{col + 3}}}"
        names += r" & median & \% of it & norm.\ alignment"
        col += 3
    if verdicts:
        head_groups.append(r" & Human--human & \multicolumn{2}{c}{Difference} & Verdict")
        rules += rf"\cmidrule(lr){{{col + 2}-{col + 3}}}"
        names += r" & coverage A & value & CI & "
    lines = [
        "% Headline table written by themesim: one row per method, comparison and configured",
        "% threshold. Needs \\usepackage{booktabs}. Same numbers as headline.csv and the",
        "% at-a-glance table of summary.html. Never average across methods.",
        r"\begin{tabular}{"
        + HEADLINE_TEX_BASE
        + ("rrr" if ceiling else "")
        + ("rrll" if verdicts else "")
        + "}",
        r"\toprule",
        "".join(head_groups) + r" \\",
        rules,
        names + r" \\",
        r"\midrule",
    ]
    previous = None
    for r in df.to_dict("records"):
        method = str(r["method"])
        if previous is not None and method != previous:
            lines.append(r"\addlinespace")
        cells = [
            tex_escape(method) if method != previous else "",
            tex_escape(f"{r['set_a']} vs {r['set_b']}"),
            fmt_threshold(r["threshold"], str(r["op"]), tex=True),
            *glance_numbers(r, _tex_num, _tex_range),
        ]
        if ceiling:
            pct = r["matched_sim_pct_of_ceiling"]
            cells += [
                _tex_num(r["ceiling_median"]),
                "--" if is_missing(pct) else f"{float(pct):.1f}",
                _tex_num(r["normalised_alignment"]),
            ]
        if verdicts:
            verdict = str(r.get("verdict") or "")
            cells += [
                _tex_num(r.get("human_human")),
                _tex_signed(r.get("difference")),
                _tex_bracket(r.get("difference_ci_low"), r.get("difference_ci_high")),
                tex_escape(verdict) if verdict else "--",
            ]
        lines.append(" & ".join(cells) + r" \\")
        previous = method
    lines.append(r"\bottomrule")
    for note in notes:  # restricted methods, the verdict's settings
        lines.append(rf"\multicolumn{{{n_cols}}}{{l}}{{\footnotesize " + tex_escape(note) + r"} \\")
    lines += [r"\end{tabular}", ""]
    return "\n".join(lines)


def write_headline(df: pd.DataFrame, *, out_csv, out_tex, notes=()) -> None:
    """headline.csv (the metric CSVs' own precision) and headline.tex (booktabs); notes:
    lines under the LaTeX table (methods that ran on some comparisons only)."""
    out_csv, out_tex = Path(out_csv), Path(out_tex)
    with atomic_path(out_csv) as tmp:
        df.to_csv(tmp, index=False, float_format="%.10g", lineterminator="\n")
    write_text(out_tex, headline_tex(df, notes))
