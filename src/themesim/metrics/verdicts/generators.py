"""The verdict per generator and method: a run group (or a single set) against the human
analysts of the reference group, each analyst the reference in turn (docs/verdicts.md).

Per method, threshold and route, one row of results/report/verdicts.csv with role
"generator": metrics.crossed.crossed_difference over every reference analyst's themes,
read from the method's themes.csv (each theme's one-to-one partner, from a comparison made
in either direction: the Hungarian assignment is the same both ways). Routes (`evidence`):

- `matched`: 1 when the partner reaches the threshold, else 0 (the share matched);
- `strength`: the partner's similarity on the method's scale, or its calibrated P(match)
  where the method has an isotonic fit on its own scale (0 without a partner);
- `segments` (where grounding ran): Cohen's κ over the transcript segments between the theme
  and that partner, both applied by the automatic coder (grounding_pairs.csv, basis `coder`:
  like with like for the generator and the analysts; 0 without a partner).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from themesim.metrics.thresholds import matches
from themesim.metrics.verdicts.analyst_margin import MARGIN_ANALYSTS, analysts_spread
from themesim.metrics.verdicts.crossed import crossed_difference, jackknife_variance, settle, word

ROLE_GENERATOR = "generator"
ROUTES = ("strength", "matched", "segments")
METRIC_OF = {"strength": "hungarian_similarity", "matched": "hungarian_coverage_a",
             "segments": "kappa"}  # fmt: skip
SEGMENT_BASIS = "coder"  # the analysts' sets applied by the same coder as the generator's
# The route the report leads with: the one the suite shows valid and more powerful
# (docs/validity.md, "verdicts": power to call `worse` at 0.3 below, 10 themes x 3 runs x 3
# analysts).
LEADING_ROUTE = "strength"
MARGIN_CONVENTION = "convention"
NOT_MADE = "a comparison it needs was not made by this method"
GENERATOR_COLUMNS = [
    "n_runs", "n_analysts", "evidence", "margin_source", "leads", "generator_runs",
    "run_sd", "analyst_sd", "difference_se", "difference_df", "covers",
    "settle_verdict", "settle_themes", "settle_runs", "margin_analysts", "withheld",
    "margin_analysts_low",
]  # fmt: skip


def _ref_rows(themes: pd.DataFrame, ref: str, other: str) -> pd.DataFrame | None:
    """The themes.csv rows of ref's themes against `other`: side a of ref vs other, or side b
    of other vs ref (the Hungarian assignment is the same both ways); None if neither."""
    for a, b, side in ((ref, other, "a"), (other, ref, "b")):
        rows = themes[(themes["set_a"] == a) & (themes["set_b"] == b) & (themes["side"] == side)]
        if not rows.empty:
            return rows
    return None


def _partner_ids(themes: pd.DataFrame, ref: str, other: str) -> pd.Series | None:
    """Each theme of `ref` -> the id of its one-to-one partner in `other` ('' for none)."""
    rows = _ref_rows(themes, ref, other)
    if rows is None:
        return None
    ids = rows["hungarian_partner_id"]
    ids = ids.astype(object).where(ids.notna(), "").astype(str)
    return pd.Series(ids.to_numpy(), index=rows["theme_id"].astype(str))


def _kappa(look: dict, theme: str, partner: str) -> float:
    """κ of a theme with its partner from {(theme, partner): κ}."""
    if not partner:  # no one-to-one partner: no agreement
        return 0.0
    if (theme, partner) not in look:  # missing from the table: refused (NaN)
        return np.nan
    # undefined (a code one of the two codings never applies): none beyond chance
    value = look[(theme, partner)]
    return 0.0 if pd.isna(value) else float(value)


def segment_kappas(themes, pairs: pd.DataFrame, ref: str, other: str) -> pd.Series | None:
    """Each theme of `ref` -> κ over the segments with its one-to-one partner in `other`
    (both coded by the automatic coder; 0 without a partner), or None when either table
    lacks the comparison."""
    ids = _partner_ids(themes, ref, other)
    if ids is None:
        return None
    coder = pairs[pairs["grounding_basis"] == SEGMENT_BASIS]
    for a, b, mine, theirs in ((ref, other, "a_id", "b_id"), (other, ref, "b_id", "a_id")):
        rows = coder[(coder["set_a"] == a) & (coder["set_b"] == b)]
        if not rows.empty:
            k = pd.to_numeric(rows["kappa"], errors="coerce")
            keys = zip(rows[mine].astype(str), rows[theirs].astype(str), strict=True)
            look = dict(zip(keys, k, strict=True))
            out = pd.Series([_kappa(look, t, p) for t, p in ids.items()], index=ids.index)
            # some partner's κ defined (else the coder applied neither theme anywhere)
            out.attrs["defined"] = any(pd.notna(look.get((t, p))) for t, p in ids.items() if p)
            return out
    return None


def partners(themes: pd.DataFrame, ref: str, other: str) -> pd.Series | None:
    """Each theme of `ref` -> its one-to-one partner's similarity in `other` (NaN: none),
    from the comparison ref vs other (side a) or other vs ref (side b); None if neither."""
    rows = _ref_rows(themes, ref, other)
    if rows is None:
        return None
    sim = pd.to_numeric(rows["hungarian_similarity"], errors="coerce")
    return pd.Series(sim.to_numpy(np.float64), index=rows["theme_id"].astype(str))


def match_flags(sim: np.ndarray, threshold: float, op: str) -> np.ndarray:
    """1.0 where a partner's similarity meets the threshold (metrics.thresholds.matches),
    0.0 elsewhere and without one."""
    return matches(sim, threshold, op).astype(np.float64)


def _values(col: pd.Series, ids, route, threshold, op, fit=None) -> np.ndarray:
    sim = col.reindex(ids).to_numpy(np.float64)
    if route == "matched":
        return match_flags(sim, threshold, op)
    if route == "strength" and fit is not None:
        from themesim.metrics.calibration import map_calibrated

        sim = np.where(np.isfinite(sim), map_calibrated(np.nan_to_num(sim), fit), np.nan)
    return np.where(np.isfinite(sim), sim, 0.0)


def study_arrays(themes, analysts, runs, route, threshold, op, pairs=None, fit=None):
    """(gen, hum, ids) for crossed_difference for one route (ids[r]: the reference analyst's
    theme ids in row order), or why not (a str): a comparison is
    missing (the method did not make it: its comparisons: setting), or on the segments route
    a κ is missing or the coder applied none of the themes. pairs:
    grounding_pairs.csv, for the segments route; fit: the method's isotonic P(match) fit,
    for the strength route."""
    gen, hum, order = [], [], []
    k = len(analysts)
    for ref in analysts:
        others = list(runs) + [h for h in analysts if h != ref]
        if route == "segments":
            cols = {x: segment_kappas(themes, pairs, ref, x) for x in others}
        else:
            cols = {x: partners(themes, ref, x) for x in others}
        if any(v is None for v in cols.values()):
            return NOT_MADE
        if route == "segments" and any(v.isna().any() for v in cols.values()):
            return "a theme pair's κ is missing from grounding_pairs.csv"
        if route == "segments" and not any(v.attrs.get("defined") for v in cols.values()):
            # every κ undefined: no evidence, not an agreement of 0
            return "the automatic coder applied none of these themes to any segment"
        ids = list(cols[runs[0]].index)
        if any(sorted(v.index) != sorted(ids) for v in cols.values()):
            return NOT_MADE
        gen.append(
            np.column_stack([_values(cols[g], ids, route, threshold, op, fit) for g in runs])
        )
        h = np.full((len(ids), k), np.nan)
        for j, x in enumerate(analysts):
            if x != ref:
                h[:, j] = _values(cols[x], ids, route, threshold, op, fit)
        hum.append(h)
        order.append(ids)
    return gen, hum, order


def leave_one_out_differences(gen_counts, hum_counts, sizes) -> np.ndarray:
    """D of the segments route with each transcript left out of every κ: gen_counts[r]
    (themes, runs, transcripts, 3) and hum_counts[r] (themes, analysts, transcripts, 3) hold
    each theme's (n_a, n_b, n_both) with its partner per transcript (NaN: no partner, κ 0;
    the reference's own column is ignored); sizes: segments per transcript. An undefined κ
    counts 0, as in the full table."""
    from themesim.metrics.grounding.kappa import kappa_counts_array

    sizes = np.asarray(sizes, dtype=np.float64)
    n = sizes.sum() - sizes

    def kappas(c):
        left = c.sum(axis=2, keepdims=True) - c  # (themes, columns, transcripts, 3)
        with np.errstate(invalid="ignore", divide="ignore"):
            k = kappa_counts_array(left[..., 2], left[..., 0], left[..., 1], n)
        return np.nan_to_num(k, nan=0.0)

    k = len(gen_counts)
    out = np.zeros(sizes.size)
    for r in range(k):
        g = kappas(np.asarray(gen_counts[r], dtype=np.float64))
        h = np.delete(kappas(np.asarray(hum_counts[r], dtype=np.float64)), r, axis=1)
        out += g.mean(axis=(0, 1)) - h.mean(axis=(0, 1))
    return out / k


def _count_cube(counts, ref, other, ids, partner, names) -> np.ndarray | None:
    """(themes, transcripts, 3): each ref theme's (n_a, n_b, n_both) with its partner in
    `other`, per transcript, from either direction of the comparison; None without it."""
    for a, b, mine, theirs, cols in (
        (ref, other, "a_id", "b_id", ["n_a", "n_b", "n_both"]),
        (other, ref, "b_id", "a_id", ["n_b", "n_a", "n_both"]),
    ):
        rows = counts[(counts["set_a"] == a) & (counts["set_b"] == b)]
        if rows.empty:
            continue
        cube = rows.set_index([mine, theirs, "transcript"])[cols]
        want = pd.MultiIndex.from_tuples(
            [(t, p, x) for t, p in zip(ids, partner, strict=True) for x in names]
        )
        values = cube[~cube.index.duplicated()].reindex(want).to_numpy(np.float64)
        return values.reshape(len(ids), len(names), 3)
    return None


def transcript_jackknife(gen_counts, hum_counts, sizes):
    """crossed_difference's `extra` on the segments route: (variance, degrees of freedom,
    "transcripts"), the delete-one jackknife of leave_one_out_differences; None with fewer
    than 3 transcripts."""
    if len(sizes) < 3:
        return None
    values = leave_one_out_differences(gen_counts, hum_counts, sizes)
    return jackknife_variance(values), values.size - 1, "transcripts"


def transcript_part(themes, counts: pd.DataFrame, analysts, runs):
    """transcript_jackknife of a study: the count arrays built from themes.csv's partners
    and counts (the coder basis's 2x2 counts per transcript,
    grounding_pairs_transcripts.parquet). None with fewer than 3 transcripts or a
    comparison missing."""
    counts = counts.astype({"a_id": str, "b_id": str, "transcript": str})
    sizes = counts.drop_duplicates("transcript").set_index("transcript")["n"]
    names = list(sizes.index)
    if len(names) < 3:
        return None
    k = len(analysts)
    gen_counts, hum_counts = [], []
    for ref in analysts:
        others = list(runs) + [h for h in analysts if h != ref]
        partner = {x: _partner_ids(themes, ref, x) for x in others}
        if any(v is None for v in partner.values()):
            return None
        ids = list(partner[runs[0]].index)
        cubes = {}
        for x in others:
            p = partner[x].reindex(ids).fillna("")
            cubes[x] = _count_cube(counts, ref, x, ids, list(p), names)
            if cubes[x] is None:
                return None
        gen_counts.append(np.stack([cubes[g] for g in runs], axis=1))
        h = np.full((len(ids), k, len(names), 3), np.nan)
        for j, x in enumerate(analysts):
            if x != ref:
                h[:, j] = cubes[x]
        hum_counts.append(h)
    return transcript_jackknife(gen_counts, hum_counts, sizes.to_numpy())


def clusters_of(analysts, ids, groups: dict | None):
    """crossed_difference's clusters from the declared groups (set -> {theme_id: group or
    None}): a theme's group, the same label across analysts one unit (they code the same
    data); a theme without one is a unit of its own. None when no theme declares a group."""
    if not groups:
        return None
    labels = [
        [(groups.get(a) or {}).get(t) for t in ts] for a, ts in zip(analysts, ids, strict=True)
    ]
    if not any(g is not None for each in labels for g in each):
        return None
    return [
        np.array(
            [
                f"group:{g}" if g is not None else f"theme:{a}:{t}"
                for g, t in zip(each, ts, strict=True)
            ]
        )
        for a, each, ts in zip(analysts, labels, ids, strict=True)
    ]


def generator_rows(
    comparisons: dict[str, pd.DataFrame],
    themes: dict[str, pd.DataFrame],
    *,
    analysts: list[str],
    generators: dict[str, list[str]],
    margin: float,
    alpha: float,
    margin_from: str = MARGIN_ANALYSTS,
    segments: dict[str, pd.DataFrame] | None = None,
    fits: dict[str, pd.DataFrame] | None = None,
    groups: dict[str, dict] | None = None,
    transcripts: dict[str, pd.DataFrame] | None = None,
) -> list[dict]:
    """Rows (VERDICT_COLUMNS + GENERATOR_COLUMNS) per method, generator, threshold, route;
    groups: set -> {theme_id: declared group or None} (io.themes.theme_groups), the theme
    units of the interval where the analysts' theme files declare them; transcripts: method
    -> grounding_pairs_transcripts.parquet, the segments route's transcript part;
    segments: method -> grounding_pairs.csv (the segments route where grounding ran); fits:
    method -> its isotonic P(match) fit (the strength route on the probability scale).
    margin_from "analysts" (three or more analysts): each row's margin is the lower bound of
    the analysts' own spread on its route's scale (metrics.analyst_margin), else `margin`."""
    out = []
    if len(analysts) < 2:
        return out
    reference = analysts[0]
    for method, comp in comparisons.items():
        th = themes.get(method)
        if th is None:
            continue
        mine = comp[comp["set_a"] == reference]
        pairs, fit = (segments or {}).get(method), (fits or {}).get(method)
        routes = ROUTES if pairs is not None else ROUTES[:2]
        for name, runs in generators.items():
            first = mine[mine["set_b"] == runs[0]].sort_values("threshold", kind="stable")
            for r in first.to_dict("records"):
                for route in routes:
                    arrays = study_arrays(
                        th, analysts, runs, route, r["threshold"], r["op"], pairs, fit
                    )
                    row = {
                        "method": method,
                        "set_a": reference,
                        "set_b": name,
                        "threshold": r["threshold"],
                        "op": r["op"],
                        "role": ROLE_GENERATOR,
                        "second_analyst": ", ".join(analysts[1:]),
                        "metric": "p_match"
                        if route == "strength" and fit is not None
                        else METRIC_OF[route],
                        "margin": margin,
                        "alpha": alpha,
                        "n_runs": len(runs),
                        "n_analysts": len(analysts),
                        "evidence": route,
                        "margin_source": MARGIN_CONVENTION,
                        "leads": route == LEADING_ROUTE,
                        "generator_runs": ", ".join(runs),
                        "difference_ci_level": 1 - 2 * alpha,
                        "verdict": "",
                        "ci_method": "",
                    }
                    if isinstance(arrays, str):
                        row["withheld"] = arrays
                    else:
                        g, h, ids = arrays
                        clusters = clusters_of(analysts, ids, groups)
                        extra = None
                        by_t = (transcripts or {}).get(method)
                        if route == "segments" and by_t is not None:
                            extra = transcript_part(th, by_t, analysts, runs)
                        res = crossed_difference(g, h, clusters, alpha=alpha, extra=extra)
                        spread, low = analysts_spread(h, alpha)
                        m = margin
                        if margin_from == MARGIN_ANALYSTS and np.isfinite(low):
                            m = low
                            row |= {"margin": m, "margin_source": MARGIN_ANALYSTS}
                        row |= {
                            "n_a": res.n_themes,
                            "agreement": res.generator,
                            "human_human": res.human,
                            "difference": res.difference,
                            "difference_ci_low": res.ci_low,
                            "difference_ci_high": res.ci_high,
                            "difference_se": res.se,
                            "difference_df": res.df,
                            "run_sd": res.run_sd,
                            "analyst_sd": res.analyst_sd,
                            # a κ's own spread over transcripts is not in the interval
                            "covers": " + ".join(res.covers)
                            + (
                                " (not transcripts)"
                                if route == "segments" and "transcripts" not in res.covers
                                else ""
                            ),
                            "verdict": word(res, m),
                            "withheld": res.withheld,
                            "margin_analysts": spread,
                            "margin_analysts_low": low,
                            "ci_method": res.ci_method,
                        }
                        if row["verdict"] in ("inconclusive", "non-inferior") and not res.withheld:
                            row |= settle(res, m, alpha)
                    out.append(row)
    return out


def generators_of(sets: list[str], analysts: list[str], run_groups: dict) -> dict:
    """Every generator of the study: each run group, and each other set on its own."""
    grouped = {s for runs in run_groups.values() for s in runs}
    out = {name: list(runs) for name, runs in run_groups.items()}
    for s in sets:
        if s not in grouped and s not in analysts:
            out[s] = [s]
    return out
