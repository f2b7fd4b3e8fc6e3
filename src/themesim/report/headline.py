"""The headline table for a paper: headline.csv (full precision) and headline.tex (booktabs)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from themesim.io.files import atomic_path
from themesim.report.format import _isnan
from themesim.report.tables import (
    COMPARISON_COLUMNS,
    TEXT_COLUMNS,
    _only_method,
    _read_table,
    _sorted_records,
    _write,
)

# The headline table for a paper (CSV and LaTeX), in the seed's recommended order; the
# report's at-a-glance table shows exactly these rows.
HEADLINE_COLUMNS = [
    "method", "set_a", "set_b", "threshold", "op", "hungarian_f1", "f1", "matched_sim_median",
    "matched_sim_q1", "matched_sim_q3", "hungarian_coverage_a", "hungarian_coverage_b",
    "raza_jaccard", "hungarian_f1_ci_low", "hungarian_f1_ci_high", "significant_match_rate",
]  # fmt: skip


def headline_frame(comparisons: Mapping[str, object]) -> pd.DataFrame:
    """HEADLINE_COLUMNS of every method's comparisons.csv, in the report's row order, and the
    paraphrase ceiling's columns when some method has them (`ceiling.active`)."""
    from themesim.metrics.ceiling import CEILING_COLUMNS

    frames, columns = [], list(HEADLINE_COLUMNS)
    for method, path in comparisons.items():
        comp = _read_table(
            path, f"comparisons CSV of method {method!r}", COMPARISON_COLUMNS, TEXT_COLUMNS
        )
        comp = _only_method(comp, method, path, "comparisons CSV")
        if all(c in comp.columns for c in CEILING_COLUMNS) and CEILING_COLUMNS[0] not in columns:
            columns += CEILING_COLUMNS
        frames.append(pd.DataFrame(_sorted_records(comp), columns=list(comp.columns)))
    if not frames:
        return pd.DataFrame(columns=columns)
    # Without bootstrap, null model or ceiling their columns are absent: NaN, never made up.
    return pd.concat([f.reindex(columns=columns) for f in frames], ignore_index=True)


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
    return "--" if _isnan(x) else f"{float(x):.3f}"


def _tex_range(lo, hi) -> str:
    return "--" if _isnan(lo) or _isnan(hi) else f"{_tex_num(lo)}--{_tex_num(hi)}"


def headline_tex(df: pd.DataFrame, notes=()) -> str:
    """A booktabs tabular of the headline table (3 decimals, as in the HTML report)."""
    tex_op = {"ge": r"$\geq$", "gt": "$>$"}
    ceiling = "ceiling_median" in df.columns  # the paraphrase ceiling ran
    lines = [
        "% Headline table written by themesim: one row per method, comparison and configured",
        "% threshold. Needs \\usepackage{booktabs}. Same numbers as headline.csv and the",
        "% at-a-glance table of summary.html. Never average across methods.",
        r"\begin{tabular}{llrrlrrlrrrr" + ("rrr}" if ceiling else "}"),
        r"\toprule",
        r" & & & \multicolumn{2}{c}{Hungarian $F_1$} & Coverage"
        r" & \multicolumn{2}{c}{Matched similarity}"
        r" & \multicolumn{2}{c}{Hungarian coverage} & Raza Jaccard & Significant"
        + (r" & \multicolumn{3}{c}{Paraphrase ceiling} \\" if ceiling else r" \\"),
        r"\cmidrule(lr){4-5}\cmidrule(lr){7-8}\cmidrule(lr){9-10}"
        + (r"\cmidrule(lr){13-15}" if ceiling else ""),
        r"Method & Comparison & $\theta$ & value & 95\,\% CI & $F_1$ & median & IQR & A & B"
        r" & (for comparison) & match rate"
        + (r" & median & \% of it & norm.\ alignment \\" if ceiling else r" \\"),
        r"\midrule",
    ]
    previous = None
    for r in df.to_dict("records"):
        method = str(r["method"])
        if previous is not None and method != previous:
            lines.append(r"\addlinespace")
        q1, q3 = r["matched_sim_q1"], r["matched_sim_q3"]
        iqr = "--" if _isnan(q1) or _isnan(q3) else f"{_tex_num(q1)}--{_tex_num(q3)}"
        op = tex_op.get(str(r["op"]), "")
        cells = [
            tex_escape(method) if method != previous else "",
            tex_escape(f"{r['set_a']} vs {r['set_b']}"),
            f"{op} {float(r['threshold']):g}".strip(),
            _tex_num(r["hungarian_f1"]),
            _tex_range(r.get("hungarian_f1_ci_low"), r.get("hungarian_f1_ci_high")),
            _tex_num(r["f1"]),
            _tex_num(r["matched_sim_median"]),
            iqr,
            _tex_num(r["hungarian_coverage_a"]),
            _tex_num(r["hungarian_coverage_b"]),
            _tex_num(r["raza_jaccard"]),
            _tex_num(r.get("significant_match_rate")),
        ]
        if ceiling:
            pct = r["matched_sim_pct_of_ceiling"]
            cells += [
                _tex_num(r["ceiling_median"]),
                "--" if _isnan(pct) else f"{float(pct):.1f}",
                _tex_num(r["normalised_alignment"]),
            ]
        lines.append(" & ".join(cells) + r" \\")
        previous = method
    lines.append(r"\bottomrule")
    for note in notes:  # a method restricted by `comparisons:`: which share it ran
        lines.append(r"\multicolumn{12}{l}{\footnotesize " + tex_escape(note) + r"} \\")
    lines += [r"\end{tabular}", ""]
    return "\n".join(lines)


def write_headline(df: pd.DataFrame, *, out_csv, out_tex, notes=()) -> None:
    """headline.csv (the metric CSVs' own precision) and headline.tex (booktabs); notes:
    lines under the LaTeX table (methods that ran on some comparisons only)."""
    out_csv, out_tex = Path(out_csv), Path(out_tex)
    with atomic_path(out_csv) as tmp:
        df.to_csv(tmp, index=False, float_format="%.10g", lineterminator="\n")
    _write(out_tex, headline_tex(df, notes))
