"""The summary report's opening paragraph, in plain words: what was compared with what, and
how; and the note on intervals cut at the most Hungarian F1 two set sizes allow."""

from __future__ import annotations

from themesim.report.format import fmt, fmt_int
from themesim.report.views import bound_note, f1_bound


def bound_summary(method_views: list[dict]) -> list[str]:
    """One note for every glance row whose interval is marked "(most possible)": the bound
    each pair of set sizes allows."""
    sizes = {}
    for m in method_views:
        for r in m["records"]:
            if bound_note(r):
                n_a, n_b = int(r["n_a"]), int(r["n_b"])
                sizes[(n_a, n_b)] = f1_bound(n_a, n_b)
    if not sizes:
        return []
    bounds = [f"{fmt(v)} for {a} against {b} themes" for (a, b), v in sorted(sizes.items())]
    return [
        "An interval marked “(most possible)” ends at the largest Hungarian F1 the two "
        "sets' sizes allow, 2·min(n_A, n_B) / (n_A + n_B): "
        + "; ".join(bounds)
        + ". The sizes, not the method, keep it below 1: such an interval is cut at the "
        "bound, not a fault."
    ]


def _n_themes(method_views) -> dict:
    """set -> its theme count, from the comparisons' n_a / n_b."""
    sizes = {}
    for m in method_views:
        for r in m["records"]:
            sizes.setdefault(r["set_a"], fmt_int(r["n_a"]))
            sizes.setdefault(r["set_b"], fmt_int(r["n_b"]))
    return sizes


def join_names(items) -> str:
    items = list(items)
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def overview_paragraph(
    study: dict, method_views: list[dict], transcripts: dict | None, config
) -> str:
    """One paragraph, in plain words: what was compared with what, and how."""
    config = config or {}
    reference = study.get("reference") or ""
    sizes = _n_themes(method_views)
    others = [f"{s} ({n})" for s, n in sizes.items() if s != reference]
    parts = []
    if reference and reference in sizes:
        parts.append(
            f"This report compares {len(sizes)} theme sets of the same interviews: the "
            f"reference {reference} ({sizes[reference]} themes) with {join_names(others)}."
        )
    elif sizes:
        parts.append(f"This report compares {len(sizes)} theme sets: {join_names(list(sizes))}.")
    group = [str(g) for g in config.get("reference_group") or []]
    if len(group) > 1:
        parts.append(
            f"{join_names(group)} are analysts' sets of the same data (the reference group): how "
            "closely they agree with each other is the yardstick the verdicts hold every other "
            "set to."
        )
    runs = {str(k): list(v) for k, v in (config.get("run_groups") or {}).items()}
    for name, members in runs.items():
        parts.append(
            f"{join_names([str(x) for x in members])} are repeated runs of one process "
            f"(run group {name})."
        )
    by_kind: dict[str, list[str]] = {}
    for m in method_views:
        by_kind.setdefault(m["kind_text"] or m["kind"] or "scores", []).append(m["name"])
    if by_kind:
        how = "; ".join(f"{join_names(names)}: {text}" for text, names in by_kind.items())
        parts.append(
            f"Each method scores every theme of one set against every theme of the other "
            f"({how}), and a pair of themes matches when its score reaches the method's "
            "threshold θ. Themes are then paired one to one, each with at most one partner, to "
            "count how many of the reference's themes the other set has (Hungarian F1). Each "
            "method is read on its own scale, never averaged with another."
        )
    transcripts = transcripts or {}
    n_t, n_s = transcripts.get("n_transcripts") or 0, transcripts.get("n_segments") or 0
    if n_t:
        grounded = bool((config.get("grounding") or {}).get("active"))
        parts.append(
            f"The {n_t} transcript(s) ({n_s} segments) "
            + (
                "also test whether matched themes label the same passages of the data."
                if grounded
                else "give the theme-set quality figures their passages."
            )
        )
    return " ".join(parts)
