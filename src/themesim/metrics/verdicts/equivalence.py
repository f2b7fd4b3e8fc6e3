"""Each set against each second analyst, paired on the reference's themes, and the verdicts
table (docs/verdicts.md).

For each theme of A (the study's reference): whether it is matched one-to-one (a Hungarian
pair with S op θ) by the compared set B and by a second analyst H of the reference group.
The quantity is the share of A's themes matched one-to-one (`hungarian_coverage_a`), and the
paired difference

    d = coverage_A(B) - coverage_A(H) = (n_only_b - n_only_h) / n_a

over the 2 x 2 table of A's themes (both / only B / only H / neither), with the paired score
interval of Tango (1998) and the bias (N / (N - 1)) and skewness corrections of Laud
(ratesci's `pairbinci`, "SCAS"). These rows describe one pair of sets read from one side
(`analysis` detail): the verdict is the generator's primary row (metrics.verdicts.rows), read
from both sides at one set size. equivalence_test still reads its interval's word, for the
validation suite (themesim.validate.equivalence).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from themesim.errors import InputError
from themesim.metrics.settings import DEFAULT_EQUIVALENCE
from themesim.metrics.thresholds import matches
from themesim.metrics.verdicts.difference import (  # VERDICTS: the words, one place
    MARGIN_CONFIG,
    VERDICTS,  # noqa: F401
)
from themesim.metrics.verdicts.difference import verdict as words
from themesim.metrics.verdicts.paired import CI_METHOD, paired_counts, paired_interval

METRIC = "hungarian_coverage_a"
# Columns of results/report/verdicts.csv, one row per method, reference comparison,
# threshold and second analyst.
VERDICT_COLUMNS = [
    "method", "set_a", "set_b", "threshold", "op", "role", "second_analyst", "metric",
    "n_a", "n_matched", "agreement", "agreement_ci_low", "agreement_ci_high",
    "hungarian_f1", "hungarian_f1_ci_low", "hungarian_f1_ci_high",
    "human_n_matched", "human_human", "human_human_ci_low", "human_human_ci_high",
    "n_both", "n_only_b", "n_only_human", "n_neither",
    "difference", "difference_ci_low", "difference_ci_high", "difference_ci_level",
    "margin", "alpha", "verdict", "ci_method",
    # the generator rows (metrics.verdicts.rows)
    "n_runs", "n_analysts", "evidence", "margin_source", "leads", "generator_runs",
    "run_sd", "analyst_sd", "difference_se", "difference_df", "covers",
    "settle_verdict", "settle_themes", "settle_runs", "margin_analysts", "withheld",
    "margin_analysts_low",
    "primary", "analysis", "n_themes_generator", "n_themes_analysts", "common_size",
    "p_better", "p_worse", "p_non_inferior", "p_equivalent", "p_value", "p_adjusted",
    "power_equivalent", "power_non_inferior", "power_worse", "power_better",
    "second_analyst_power", "var_themes", "var_analysts", "var_runs",
]  # fmt: skip
ROLE_COMPARED = "compared"
ROLE_GROUP = "reference group"
# one set against one second analyst, paired on the reference's themes: a description of
# that pair, not a verdict (the verdict is the generator's primary row)
DETAIL = "detail"


def verdict(low: float, high: float, margin: float) -> str:
    """The word for a (1 - 2 alpha) interval against +-margin ('' without one)."""
    return words(low, high, margin)


def equivalence_test(
    x, y, margin: float = DEFAULT_EQUIVALENCE["margin"], alpha: float = DEFAULT_EQUIVALENCE["alpha"]
) -> dict:
    """The paired comparison of two flag vectors over A's themes (x: the compared set,
    y: the second analyst): counts, difference, its (1 - 2 alpha) interval and the verdict."""
    check_settings(margin, alpha)
    a, b, c, d = paired_counts(x, y)
    n = a + b + c + d
    level = 1 - 2 * alpha
    lo, hi = paired_interval(a, b, c, d, level)
    lo, hi = float(lo), float(hi)
    return {
        "n_both": a,
        "n_only_b": b,
        "n_only_human": c,
        "n_neither": d,
        "difference": (b - c) / n if n else np.nan,
        "difference_ci_low": lo,
        "difference_ci_high": hi,
        "difference_ci_level": level,
        "verdict": verdict(lo, hi, margin),
    }


MARGIN_FROM = ("convention", "analysts")


def check_settings(
    margin: float, alpha: float, margin_from: str = DEFAULT_EQUIVALENCE["margin_from"]
) -> None:
    if margin_from not in MARGIN_FROM:
        raise ValueError(
            f"equivalence margin_from must be one of {', '.join(MARGIN_FROM)}, got {margin_from!r}"
        )
    if not 0 < alpha < 0.5:
        raise ValueError(f"equivalence alpha must be between 0 and 0.5, got {alpha}")
    if not 0 < margin < 1:
        raise ValueError(f"equivalence margin must be between 0 and 1, got {margin}")


# ---------------------------------------------------------------------------
# the report's table, from the metric CSVs


def _matched_from_themes(themes: pd.DataFrame, set_a: str, set_b: str, ids, threshold, op):
    """Per theme of A (in `ids` order): matched one-to-one in set_a vs set_b at the threshold,
    read from themes.csv (side a: the Hungarian partner's similarity); None when themes.csv
    has no rows for the comparison."""
    rows = themes[(themes["set_a"] == set_a) & (themes["set_b"] == set_b) & (themes["side"] == "a")]
    if rows.empty:
        return None
    sim = rows.set_index(rows["theme_id"].astype(str))["hungarian_similarity"]
    sim = pd.to_numeric(sim, errors="coerce").reindex([str(i) for i in ids])
    return matches(sim.to_numpy(np.float64), float(threshold), op)


@dataclass(frozen=True)
class _Pairing:
    """What every row of verdict_table's pairs shares: the reference, everyone of its group
    (the reference first), the margin and alpha."""

    reference: str
    everyone: list
    margin: float
    alpha: float

    @property
    def group(self) -> list:
        return self.everyone[1:]


def verdict_table(
    comparisons: dict[str, pd.DataFrame],
    themes: dict[str, pd.DataFrame],
    *,
    reference: str,
    group=(),
    margin: float = DEFAULT_EQUIVALENCE["margin"],
    alpha: float = DEFAULT_EQUIVALENCE["alpha"],
    margin_from: str = DEFAULT_EQUIVALENCE["margin_from"],
    generator_rows: list[dict] | None = None,
) -> pd.DataFrame:
    """VERDICT_COLUMNS: the generator rows (metrics.verdicts.rows, each generator against
    the analysts; one primary per generator) first, then per method, comparison of the
    reference with another set, threshold and second analyst (each member of `group` but
    the reference): the set's and the analyst's share of the reference's themes matched
    one-to-one and their paired difference with its interval, a description of that pair
    (`analysis` detail, no verdict word). A set of the group is listed once with role
    "reference group"; without a group every comparison is listed with its agreement only.
    Values are copied from comparisons.csv where it has them; the pairing reads each A
    theme's Hungarian partner from themes.csv (method -> table)."""
    check_settings(margin, alpha, margin_from)
    everyone = [reference] + [g for g in dict.fromkeys(group or ()) if g != reference]
    pairing = _Pairing(reference, everyone, margin, alpha)
    out = list(generator_rows or [])
    for method, comp in comparisons.items():
        comp = comp[comp["set_a"] == reference]
        th = themes.get(method)
        for set_b in dict.fromkeys(comp["set_b"]):
            out += _pair_rows(pairing, method, comp, set_b, th)
    df = pd.DataFrame(out, columns=VERDICT_COLUMNS)
    for col in ("second_analyst", "verdict", "ci_method", "evidence", "margin_source",
                "generator_runs", "covers", "withheld", "analysis"):  # fmt: skip
        df[col] = df[col].astype(object).where(df[col].notna(), "")
    for col in ("primary", "leads"):
        df[col] = df[col].astype(object).where(df[col].notna(), False).astype(bool)
    return df


def _pair_rows(p: _Pairing, method: str, comp: pd.DataFrame, set_b: str, th) -> list[dict]:
    """The rows of the reference against set_b (comp: the method's comparisons of the
    reference; th: its themes.csv, or None): per threshold, one per second analyst."""
    mine = comp[comp["set_b"] == set_b].sort_values("threshold", kind="stable")
    role = ROLE_GROUP if set_b in p.group else ROLE_COMPARED
    analysts = [g for g in p.group if g != set_b] if role == ROLE_COMPARED else []
    out = []
    for r in mine.to_dict("records"):
        base = _base_row(p, method, set_b, role, r, bool(analysts))
        if not analysts:
            out.append(base)
            continue
        for h in analysts:
            out.append(_analyst_row(p, base, r, comp, th, h))
    return out


def _base_row(p: _Pairing, method: str, set_b: str, role: str, r: dict, paired: bool) -> dict:
    """What comparisons.csv's row r says of the reference against set_b; paired: the row
    is read against a second analyst (a margin and alpha apply)."""
    return {
        "method": method,
        "set_a": p.reference,
        "set_b": set_b,
        "threshold": r["threshold"],
        "op": r["op"],
        "role": role,
        "metric": METRIC,
        "n_a": r["n_a"],
        "n_matched": r["hungarian_n_matched"],
        "agreement": r["hungarian_coverage_a"],
        "agreement_ci_low": r.get("hungarian_coverage_a_ci_low", np.nan),
        "agreement_ci_high": r.get("hungarian_coverage_a_ci_high", np.nan),
        "hungarian_f1": r["hungarian_f1"],
        "hungarian_f1_ci_low": r.get("hungarian_f1_ci_low", np.nan),
        "hungarian_f1_ci_high": r.get("hungarian_f1_ci_high", np.nan),
        "margin": p.margin if paired else np.nan,
        "alpha": p.alpha if paired else np.nan,
        "verdict": "",
        "ci_method": "",
        "second_analyst": "",
        "n_runs": 1,
        "n_analysts": len(p.everyone) if p.group else np.nan,
        "evidence": "matched",
        "margin_source": MARGIN_CONFIG if p.group else "",
        "leads": False,
        "primary": False,
        "analysis": DETAIL,
        "generator_runs": set_b,
    }


def _analyst_row(p: _Pairing, base: dict, r: dict, comp: pd.DataFrame, th, h: str) -> dict:
    """base read against the second analyst h: the analyst's agreement from comparisons.csv
    and, where themes.csv has both comparisons, the paired difference (a description)."""
    set_b, threshold = base["set_b"], r["threshold"]
    row = dict(base, second_analyst=h)
    hum = comp[(comp["set_b"] == h) & (comp["threshold"] == threshold)]
    if not hum.empty:
        hr = hum.iloc[0]
        row |= {
            "human_n_matched": hr["hungarian_n_matched"],
            "human_human": hr["hungarian_coverage_a"],
            "human_human_ci_low": hr.get("hungarian_coverage_a_ci_low", np.nan),
            "human_human_ci_high": hr.get("hungarian_coverage_a_ci_high", np.nan),
        }
    flags = None
    if th is not None and not hum.empty:
        flags = _paired_flags(th, p.reference, set_b, h, threshold, r["op"])
    if flags is not None:
        for f, name, counted in ((flags[0], set_b, r), (flags[1], h, hum.iloc[0])):
            _check_count(f, counted, base["method"], name, threshold)
        row |= equivalence_test(*flags, p.margin, p.alpha)
        row["verdict"] = ""  # a description, not the verdict
        row["ci_method"] = CI_METHOD
    row.setdefault("difference_ci_level", 1 - 2 * p.alpha)
    return row


def _paired_flags(themes: pd.DataFrame, reference: str, set_b: str, human: str, threshold, op):
    """(set_b's flags, the analyst's flags) over the reference's themes, or None when
    themes.csv lacks either comparison (a comparison not scored, e.g. flagged under z)."""
    side_a = themes[(themes["set_a"] == reference) & (themes["side"] == "a")]
    ids = list(dict.fromkeys(side_a.loc[side_a["set_b"] == set_b, "theme_id"].astype(str)))
    if not ids:
        return None
    x = _matched_from_themes(themes, reference, set_b, ids, threshold, op)
    y = _matched_from_themes(themes, reference, human, ids, threshold, op)
    return None if x is None or y is None else (x, y)


def _check_count(flags, row, method: str, set_b: str, threshold) -> None:
    """The flags read from themes.csv must count what comparisons.csv counted."""
    n = row["hungarian_n_matched"]
    if np.isfinite(n) and int(flags.sum()) != int(n):
        raise InputError(
            f"results/metrics/{method}/themes.csv",
            f"the Hungarian partners of {set_b}'s comparison at threshold {threshold:g} give "
            f"{int(flags.sum())} matched themes, comparisons.csv counts {int(n)}",
            "Rerun the metrics rule of this method: its tables come from different runs",
        )


def verdict_note(
    group, margin: float, alpha: float, margin_from: str = DEFAULT_EQUIVALENCE["margin_from"]
) -> str:
    """The line under headline.tex that says what its verdict columns hold."""
    level = 1 - 2 * alpha
    against = (
        "the analysts' own spread (tested with its uncertainty)"
        if margin_from == "analysts"
        else f"+-{margin:g}, fixed before the data"
    )
    return (
        f"Human--human: the analysts' ({', '.join(group)}) agreement with each other; "
        f"difference: the set's generator's agreement with them minus it, both read from "
        f"both sets at one set size, {level * 100:g} % interval, on the study's primary "
        f"comparison; verdict: TOST at alpha {alpha:g} against {against} "
        "(results/report/verdicts.csv)."
    )
