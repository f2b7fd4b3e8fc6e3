"""The plain-text summary of one comparison, in the form of seed 000's "Example output"."""

from __future__ import annotations

import math
from collections.abc import Mapping

from themesim.metrics.registry import label


def _num(x: float, digits: int = 2) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _pct(k: int, n: int) -> str:
    return f"{k}/{n}" + (f" ({100 * k / n:.0f}%)" if n else "")


def format_text_block(row: Mapping, theta: str) -> str:
    """Render one metrics row (METRICS.md names) as the seed's text block; theta: the row's
    threshold as its caller shows it ("≥ 0.5")."""
    n_a, n_b = int(row["n_a"]), int(row["n_b"])
    alignment = (
        f"Theme Alignment: {label('hungarian_f1')} = {_num(row['hungarian_f1'])}, "
        f"{label('f1')} = {_num(row['f1'])}"
    )
    matched = row["hungarian_n_matched"]
    if matched is None or math.isnan(matched):
        # a pair its scale cannot score (z of a set without within-set spread): say why
        why = row.get("scale_flag")
        why = why if isinstance(why, str) and why else "no similarity on this scale"
        return f"{alignment}\n- Not scored at similarity {theta}: {why} (docs/metrics.md)"
    k = int(matched)
    lines = [alignment, f"- Optimal one-to-one: {k}/{n_a} themes matched (similarity {theta})"]
    if k:
        lines.append(
            f"- Match quality: median={_num(row['matched_sim_median'])} "
            f"(Q1={_num(row['matched_sim_q1'])}, Q3={_num(row['matched_sim_q3'])}, "
            f"range: {_num(row['matched_sim_min'])}-{_num(row['matched_sim_max'])})"
        )
    else:
        lines.append("- Match quality: no pair above the threshold")
    lines += [
        # "coverage" is the hit rate and precision family (Coverage F1 above); this line
        # counts one-to-one partners, so it says so
        f"- One-to-one share: {_pct(k, n_a)} of A themes, {_pct(k, n_b)} of B themes",
        f"- Paper's Jaccard: {_num(row['raza_jaccard'])} (for comparison)",
    ]
    return "\n".join(lines)
