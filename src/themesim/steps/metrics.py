"""The metrics rule: comparisons.csv, themes.csv, sweep.csv and transport plans."""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd

from themesim.io.files import write_csv, write_parquet
from themesim.io.themes import read_themes_parquet, theme_groups
from themesim.kinds import get as get_kind
from themesim.metrics.columns import PAIR_COLUMNS, THEME_KEY_COLUMNS

log = logging.getLogger("themesim")


def _calibrated(settings: dict, calibration) -> tuple[dict, list | None, pd.DataFrame | None]:
    """Settings with `calibrated` thresholds resolved from the calibration output
    ([summary csv, isotonic csv]), each threshold's source, and the fit under
    scale: calibrated."""
    if not calibration:
        return settings, None, None
    from themesim.metrics.calibration import resolve_thresholds

    summary = pd.read_csv(calibration[0]).iloc[0].to_dict()
    fit = pd.read_csv(calibration[1]) if settings.get("scale") == "calibrated" else None
    settings["thresholds"], source = resolve_thresholds(settings["thresholds"], summary, fit)
    return settings, source, fit


def _flagged_rows(S: np.ndarray, thresholds, flag: str) -> pd.DataFrame:
    """A comparison whose z scale is undefined: set sizes and the flag, metrics NaN (every
    metric column present, so the table has the same columns whether or not any is scored)."""
    from themesim.metrics.sets.coverage import METRIC_COLUMNS

    n_a, n_b = S.shape
    rows = pd.DataFrame({"threshold": list(thresholds)})
    for col in METRIC_COLUMNS:
        rows[col] = {"n_a": n_a, "n_b": n_b}.get(col, np.nan)
    return rows.assign(scale_flag=flag)


def _defined_null(method, a, b, pool: np.ndarray, n_b: int) -> np.ndarray | None:
    """The pool without the salad sets whose z is undefined (a salad text without a
    within-set spread); None, with a warning, when fewer than MIN_NULL_POOL texts remain."""
    from themesim.metrics.sets.nulls import MIN_POOL, defined_sets

    kept, dropped = defined_sets(pool, n_b)
    if kept.shape[1] < max(MIN_POOL, n_b):
        log.warning(
            "%s: %s vs %s: no null p-values: %d of the %d word-salad sets of %s have a text "
            "without a within-set spread on the z scale; raise metrics.null_model.pool",
            method, a, b, dropped, pool.shape[1] // n_b, b,
        )  # fmt: skip
        return None
    log.info(
        "%s: %s vs %s: %d of the %d word-salad sets of %s left out of the null: a text of "
        "theirs has no within-set spread on the z scale",
        method, a, b, dropped, pool.shape[1] // n_b, b,
    )  # fmt: skip
    return kept


def _log_null_resolution(method, a, b, null, pool_size: int, n_b: int, st, pool=None) -> None:
    """Say where the null's p rests on the fitted tail or stops at its floor, and where that
    tail is heavy (docs/nulls.md)."""
    from themesim.metrics.sets.nulls import FLOOR, GPD, fit_tail

    k = pool_size // n_b
    alpha = st.null_model["alpha"]
    advice = f"metrics.null_model.pool: {math.ceil(1 / alpha) * n_b} or more"
    if (k + 1) * alpha < 1:
        log.info(
            "%s: %s vs %s: B's pool holds %d word-salad sets, so a p below 1/%d = %.3g rests "
            "on the fitted tail alone (%s would reach %g by ranks)",
            method, a, b, k, k + 1, 1 / (k + 1), advice, alpha,
        )  # fmt: skip
    floor = null["null_tail"] == FLOOR
    if floor.any():
        log.warning(
            "%s: %s vs %s: %d theme(s) of %s beat every word-salad set of the pool, but no tail "
            "fit passed its check: their null_p stays at 1/%d = %.3g (null_tail = floor); "
            "%s resolves smaller p",
            method, a, b, int(floor.sum()), a, k + 1, 1 / (k + 1), advice,
        )  # fmt: skip
    if pool is None:
        return
    # A heavy tail (shape > 0) has no end a pool can show: the one case where the tail's p
    # errs small (BH's FDR up to 0.19 in the suite's t5 design).
    fits = [fit_tail(pool[i, : k * n_b]) for i in np.flatnonzero(null["null_tail"] == GPD)]
    heavy = [f.shape_fit for f in fits if f is not None and f.shape_fit > 0]
    if heavy:
        log.warning(
            "%s: %s vs %s: %d theme(s) of %s take null_p from a heavy word-salad tail (fitted "
            "shape up to %.2f > 0): such a tail can go on beyond anything a pool shows, so "
            "those p and BH's null_q may be too small; read them as descriptive (docs/nulls.md)",
            method, a, b, len(heavy), a, max(heavy),
        )  # fmt: skip


def metric_tables(
    *,
    method: str,
    kind: str,
    pairs,
    themes: dict,
    similarities,
    within: dict,
    nulls: dict,
    embeddings: dict,
    settings: dict,
    sweep: dict,
    out_comparisons,
    out_themes,
    out_sweep,
    out_transport,
    out_splits,
    out_decisions,
    out_thresholds,
    decision: dict | None = None,
    calibration=(),
    spec: dict | None = None,
    ceiling=None,
    reference: str | None = None,
    out_transport_manifest=None,
) -> None:
    """comparisons.csv (configured thresholds), sweep.csv (grid), themes.csv, transport plans,
    and thresholds.csv: the thresholds as resolved here and their scale, which every later
    step reads (metrics.thresholds).

    out_transport: one plan per pair; out_transport_manifest lists them (themesim.io.manifest).

    spec: the method's similarity settings (its kind's similarity_spec), for its null model.
    ceiling: the method's paraphrase similarities (results/ceiling/{method}.parquet), which add
    the paraphrase-ceiling columns of themesim.metrics.sets.ceiling against the reference's themes.
    """
    from themesim.embed.vectors import read_embeddings
    from themesim.metrics.comparison import Settings, comparison_rows, theme_rows
    from themesim.metrics.method_scale import base_scale
    from themesim.metrics.sets.coverage import threshold_grid
    from themesim.metrics.sets.scales import Z_SWEEP, decision_changes, z_scale
    from themesim.metrics.sets.transport import plan_long, splits_and_joins
    from themesim.similarity import read_similarity

    settings, source, fit = _calibrated(dict(settings), calibration)
    st = Settings(**settings)
    on_z = st.scale == "z"
    if decision and not on_z:
        decision = dict(decision) | {"raw": st.thresholds}  # `calibrated` resolved

    to_scale = base_scale(st.scale, st.clamp, fit)

    if on_z:
        sweep = Z_SWEEP
    grid = threshold_grid(sweep["start"], sweep["stop"], sweep["step"])
    tables = {name: read_themes_parquet(p) for name, p in themes.items()}
    # Within-set matrices on the base scale (cosine, clamped or angular; cosine under z).
    W0 = {
        s: to_scale(read_similarity(p, tables[s]["theme_id"], tables[s]["theme_id"]))
        for s, p in within.items()
    }
    # Under z the within-set families see each set standardised against itself.
    W = {s: z_scale(w, w, w)[0] for s, w in W0.items()} if on_z else W0
    comp, swp, per_theme, splits, changes = [], [], [], [], []
    emb: dict = {}
    # Transport's ceiling: identical themes (1), or the paraphrase ceiling where measured.
    paraphrase_ceiling = math.nan
    if ceiling is not None and not on_z:
        from themesim.metrics.sets.ceiling import ceiling_median, ceilings_on_scale

        paraphrase_ceiling = ceiling_median(ceilings_on_scale(ceiling, to_scale))
    for (a, b), path, out_plan in zip(pairs, similarities, out_transport, strict=True):
        ta, tb = tables[a], tables[b]
        S0 = to_scale(read_similarity(path, ta["theme_id"], tb["theme_id"]))
        head = {"method": method, "set_a": a, "set_b": b}
        ids_a, ids_b = ta["theme_id"].tolist(), tb["theme_id"].tolist()
        flag = ""
        S = S0
        if on_z:
            S, flag = z_scale(S0, W0[a], W0[b])
        if a in W0 and b in W0 and decision:
            Z, zflag = (S, flag) if on_z else z_scale(S0, W0[a], W0[b])
            dc = decision_changes(
                S0, Z, decision["raw"], decision["z"], st.op, ids_a, ids_b, zflag, st.z_alpha
            )
            changes.append(pd.concat([pd.DataFrame([head] * len(dc)), dc], axis=1))
        if not np.isfinite(S).all():
            # z undefined for some theme (set too small, zero spread): flagged, not scored.
            rows = _flagged_rows(S, st.thresholds, flag)
            comp.append(pd.concat([pd.DataFrame([head] * len(rows)), rows], axis=1))
            write_parquet(
                plan_long(np.full(S.shape, np.nan), ids_a, ids_b), out_plan, checksum=False
            )
            continue
        if a in embeddings and a not in emb:  # one read per A set, not per comparison
            emb[a] = read_embeddings(embeddings[a])[1]
        emb_a = emb.get(a)

        def null_scale(M, W_null, W_a=W0[a] if on_z else None):
            # Under z each null set is standardised against its own within-set spread,
            # as a real B set is.
            M = to_scale(M)
            return M if W_a is None else z_scale(M, W_a, to_scale(W_null))[0]

        null_pool = get_kind(kind).null_pool(
            ta,
            tb,
            nulls.get(b),
            st.null_model["pool"],
            st.null_model["seed"],
            null_scale,
            emb_a,
            spec=spec,
        )
        if null_pool is not None and not np.isfinite(null_pool).all():
            null_pool = _defined_null(method, a, b, null_pool, len(tb))
        own = a == reference and np.isfinite(paraphrase_ceiling)
        rows, extra = comparison_rows(
            S,
            st,
            W_a=W.get(a),
            W_b=W.get(b),
            null_pool=null_pool,
            mass_ceiling=paraphrase_ceiling if own else 1.0,
            # declared groups (theme files' `group`): cluster-robust intervals
            groups_a=list(theme_groups(ta).values()),
            groups_b=list(theme_groups(tb).values()),
        )
        if extra["null"] is not None:
            _log_null_resolution(
                method, a, b, extra["null"], null_pool.shape[1], len(tb), st, pool=null_pool
            )
        if on_z:
            rows["scale_flag"] = flag
        if calibration:
            rows.insert(1, "threshold_source", source)
        comp.append(pd.concat([pd.DataFrame([head] * len(rows)), rows], axis=1))
        sw, _ = comparison_rows(
            S,
            st,
            thresholds=grid,
            with_bootstrap=False,
            plan=extra["plan"],
            references=extra["references"],
        )
        swp.append(pd.concat([pd.DataFrame([head] * len(sw)), sw], axis=1))
        tt = theme_rows(
            S, st, ta, tb, W_a=W.get(a), W_b=W.get(b), null_pool=null_pool, **_reused(extra)
        )
        per_theme.append(pd.concat([pd.DataFrame([head] * len(tt)), tt], axis=1))
        plan = extra["plan"]
        # per pair: the transport manifest lists it with its sha256
        write_parquet(plan_long(plan, ids_a, ids_b), out_plan, checksum=False)
        theta = st.thresholds[0]
        sj = splits_and_joins(
            plan, ids_a, ids_b, min_share=st.transport["min_share"], S=S, threshold=theta, op=st.op
        )
        sj.insert(0, "threshold", theta)
        splits.append(pd.concat([pd.DataFrame([head] * len(sj)), sj], axis=1))
    if out_transport_manifest is not None:
        from themesim.io.manifest import write_manifest

        write_manifest(out_transport, out_transport_manifest)
    _write_decisions(changes, out_decisions)
    _write_thresholds(method, st, source, out_thresholds)
    comp = _scored_first(comp)
    if ceiling is not None:
        from themesim.metrics.sets.ceiling import CEILING_COLUMNS, join_ceiling

        comp = pd.concat(comp, ignore_index=True)
        if on_z:  # a paraphrase has no within-set spread: no ceiling in z units
            comp = [comp.assign(**{c: np.nan for c in CEILING_COLUMNS})]
        else:
            all_themes = pd.concat(per_theme, ignore_index=True)
            comp = [join_ceiling(comp, all_themes, ceiling, reference, to_scale)]
    from themesim.metrics.sets.coverage import METRIC_COLUMNS

    for frames, out, key in (
        (comp, out_comparisons, PAIR_COLUMNS),
        (swp, out_sweep, PAIR_COLUMNS + METRIC_COLUMNS),
        (per_theme, out_themes, THEME_KEY_COLUMNS),
        (splits, out_splits, PAIR_COLUMNS),
    ):
        # No comparison scored (e.g. every one flagged under z): a header, never an empty file.
        df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=key)
        if "threshold" in df:
            df.insert(df.columns.get_loc("threshold") + 1, "op", st.op)
        write_csv(df, out)
    log.info("%s: metrics for %d comparisons", method, len(pairs))


def _reused(extra: dict) -> dict:
    """What theme_rows takes over from comparison_rows of the same comparison."""
    return {"null": extra["null"], "parts": extra["parts"]}


def _scored_first(frames: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """Column order from a scored comparison, whichever comes first (flagged rows lack most)."""
    if not frames:
        return frames
    widest = max(frames, key=lambda f: f.shape[1])
    cols = list(widest.columns) + [c for f in frames for c in f.columns if c not in widest]
    cols = list(dict.fromkeys(cols))
    return [f.reindex(columns=cols) for f in frames]


def _write_thresholds(method: str, st, source: list | None, out) -> None:
    from themesim.metrics.thresholds import FROM_CONFIG, threshold_table

    sources = source or [FROM_CONFIG] * len(st.thresholds)
    write_csv(threshold_table(method, st.thresholds, sources, st.op, st.scale, st.clamp), out)


def _write_decisions(changes: list[pd.DataFrame], out) -> None:
    from themesim.metrics.sets.scales import DECISION_COLUMNS

    head = ["method", "set_a", "set_b"]
    df = (
        pd.concat(changes, ignore_index=True)
        if changes
        else pd.DataFrame(columns=head + DECISION_COLUMNS)
    )
    write_csv(df, out)
