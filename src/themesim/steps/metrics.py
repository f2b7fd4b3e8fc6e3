"""The metrics rule: comparisons.csv, themes.csv, sweep.csv and transport plans."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from themesim.embed.vectors import read_embeddings
from themesim.io.files import write_csv, write_parquet
from themesim.io.manifest import write_manifest
from themesim.io.themes import read_themes_parquet, theme_groups
from themesim.kinds import get as get_kind
from themesim.metrics.columns import PAIR_COLUMNS, THEME_KEY_COLUMNS
from themesim.metrics.comparison import Settings, comparison_rows, sweep_rows, theme_rows
from themesim.metrics.method_scale import base_scale
from themesim.metrics.sets.ceiling import (
    CEILING_COLUMNS,
    ceiling_median,
    ceilings_on_scale,
    join_ceiling,
)
from themesim.metrics.sets.coverage import METRIC_COLUMNS, threshold_grid
from themesim.metrics.sets.nulls import FLOOR, GPD, MIN_POOL, defined_sets, fit_tail
from themesim.metrics.sets.scales import DECISION_COLUMNS, Z_SWEEP, decision_changes, z_scale
from themesim.metrics.sets.transport import plan_long, splits_and_joins
from themesim.metrics.thresholds import FROM_CONFIG, resolve_thresholds, threshold_table
from themesim.similarity import read_similarity
from themesim.steps.job import Job

log = logging.getLogger("themesim")


def _calibrated(settings: dict, calibration) -> tuple[dict, list | None, pd.DataFrame | None]:
    """Settings with `calibrated` thresholds resolved from the calibration output
    ([summary csv, isotonic csv]), each threshold's source, and the fit under
    scale: calibrated."""
    if not calibration:
        return settings, None, None

    summary = pd.read_csv(calibration[0]).iloc[0].to_dict()
    fit = pd.read_csv(calibration[1]) if settings.get("scale") == "calibrated" else None
    settings["thresholds"], source = resolve_thresholds(settings["thresholds"], summary, fit)
    return settings, source, fit


def _flagged_rows(S: np.ndarray, thresholds, flag: str) -> pd.DataFrame:
    """A comparison whose z scale is undefined: set sizes and the flag, metrics NaN (every
    metric column present, so the table has the same columns whether or not any is scored)."""
    n_a, n_b = S.shape
    rows = pd.DataFrame({"threshold": list(thresholds)})
    for col in METRIC_COLUMNS:
        rows[col] = {"n_a": n_a, "n_b": n_b}.get(col, np.nan)
    return rows.assign(scale_flag=flag)


def _defined_null(method, a, b, pool: np.ndarray, n_b: int) -> np.ndarray | None:
    """The pool without the salad sets whose z is undefined (a salad text without a
    within-set spread); None, with a warning, when fewer than MIN_NULL_POOL texts remain."""
    kept, dropped = defined_sets(pool, n_b)
    enough = kept.shape[1] >= max(MIN_POOL, n_b)
    what = (
        "left out of the null: a text of theirs has no within-set spread on the z scale"
        if enough
        else "have a text without a within-set spread on the z scale: no null p-values; "
        "raise metrics.null_model.pool"
    )
    say = log.info if enough else log.warning
    say("%s: %s vs %s: %d of the %d word-salad sets of %s %s", method, a, b, dropped,
        pool.shape[1] // n_b, b, what)  # fmt: skip
    return kept if enough else None


def _log_null_resolution(method, a, b, null, pool_size: int, n_b: int, st, pool=None) -> None:
    """Say where the null's p rests on the fitted tail or stops at its floor, and where that
    tail is heavy (docs/nulls.md)."""
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


@dataclass
class _Method:
    """What every comparison of one metrics job reads: the method's settings, its scale and
    the tables read once (themes, within-set matrices, the A sets' embeddings)."""

    name: str
    kind: str
    spec: dict | None
    st: object  # metrics.settings.Settings, `calibrated` resolved
    source: list | None  # each threshold's source, when one was `calibrated`
    to_scale: object  # raw S -> the method's base scale (metrics.method_scale)
    grid: list
    decision: dict | None
    tables: dict  # set -> theme table
    W0: dict  # set -> within-set matrix on the base scale
    W: dict  # ... as the within-set families see it (standardised under z)
    embeddings: dict  # A set -> its embedding file
    nulls: dict  # B set -> its embedded word-salad pool
    ceiling: float  # the paraphrase ceiling's median on the method's scale (NaN: none)
    reference: str | None
    read: dict = field(default_factory=dict)  # A set -> its vectors, read once

    @property
    def on_z(self) -> bool:
        return self.st.scale == "z"


def _method(job: Job) -> _Method:
    """The job's settings resolved (`calibrated` from the calibration output) and the
    tables every comparison reads."""
    p = job.params
    settings, source, fit = _calibrated(dict(p["settings"]), job.input["calibration"])
    st = Settings(**settings)
    on_z, decision = st.scale == "z", p["decision"]
    if decision and not on_z:
        decision = dict(decision) | {"raw": st.thresholds}  # `calibrated` resolved
    to_scale = base_scale(st.scale, st.clamp, fit)
    sweep = Z_SWEEP if on_z else p["sweep"]
    tables = {name: read_themes_parquet(path) for name, path in job.input["themes"].items()}
    # Within-set matrices on the base scale (cosine, clamped or angular; cosine under z).
    W0 = {
        s: to_scale(read_similarity(path, tables[s]["theme_id"], tables[s]["theme_id"]))
        for s, path in p["files"]["within"].items()
    }
    # Under z the within-set families see each set standardised against itself.
    W = {s: z_scale(w, w, w)[0] for s, w in W0.items()} if on_z else W0
    # Transport's ceiling: identical themes (1), or the paraphrase ceiling where measured.
    ceiling = math.nan
    if job.one("ceiling") and not on_z:
        ceiling = ceiling_median(ceilings_on_scale(job.one("ceiling"), to_scale))
    return _Method(
        name=p["method"],
        kind=p["kind"],
        spec=p["spec"],
        st=st,
        source=source,
        to_scale=to_scale,
        grid=threshold_grid(sweep["start"], sweep["stop"], sweep["step"]),
        decision=decision,
        tables=tables,
        W0=W0,
        W=W,
        embeddings=job.input["embeddings"],
        nulls=p["files"]["nulls"],
        ceiling=ceiling,
        reference=p["reference"],
    )


def metric_tables(job: Job) -> None:
    """comparisons.csv (configured thresholds), sweep.csv (grid), themes.csv, the transport
    plans (one per pair, listed in their manifest, themesim.io.manifest), splits_joins.csv,
    decision_changes.csv and thresholds.csv: the thresholds as resolved here and their
    scale, which every later step reads (metrics.thresholds).

    The job (inputs.metrics.job): the method's comparisons and their files; its spec (its
    kind's similarity_spec) for its null model; its paraphrase similarities, when measured
    (results/ceiling/{method}.parquet), add the paraphrase-ceiling columns of
    themesim.metrics.sets.ceiling against the reference's themes.
    """
    m, files, out = _method(job), job.params["files"], job.output
    frames: dict = {"comparisons": [], "sweep": [], "themes": [], "splits": [], "decisions": []}
    pairs = [tuple(pair) for pair in job.params["pairs"]]
    for pair, path, plan in zip(pairs, files["similarity"], files["transport"], strict=True):
        for name, df in _comparison(m, pair, path, plan).items():
            frames[name].append(df)
    write_manifest(files["transport"], out["transport_manifest"])
    _write_decisions(frames["decisions"], out["decisions"])
    _write_thresholds(m.name, m.st, m.source, out["thresholds"])
    comp = _scored_first(frames["comparisons"])
    if job.one("ceiling"):
        comp = [_with_ceiling(m, comp, frames["themes"], job.one("ceiling"))]

    for frames_of, path, key in (
        (comp, out["comparisons"], PAIR_COLUMNS),
        (frames["sweep"], out["sweep"], PAIR_COLUMNS + METRIC_COLUMNS),
        (frames["themes"], out["themes"], THEME_KEY_COLUMNS),
        (frames["splits"], out["splits"], PAIR_COLUMNS),
    ):
        # No comparison scored (e.g. every one flagged under z): a header, never an empty file.
        df = pd.concat(frames_of, ignore_index=True) if frames_of else pd.DataFrame(columns=key)
        if "threshold" in df:
            df.insert(df.columns.get_loc("threshold") + 1, "op", m.st.op)
        write_csv(df, path)
    log.info("%s: metrics for %d comparisons", m.name, len(pairs))


def _with_ceiling(m: _Method, comp: list, per_theme: list, ceiling) -> pd.DataFrame:
    """The comparisons with the paraphrase-ceiling columns (NaN under z: a paraphrase has
    no within-set spread)."""
    comp = pd.concat(comp, ignore_index=True)
    if m.on_z:
        return comp.assign(**{c: np.nan for c in CEILING_COLUMNS})
    all_themes = pd.concat(per_theme, ignore_index=True)
    return join_ceiling(comp, all_themes, ceiling, m.reference, m.to_scale)


def _headed(head: dict, rows: pd.DataFrame) -> pd.DataFrame:
    """rows with the comparison's method, set_a and set_b in front."""
    return pd.concat([pd.DataFrame([head] * len(rows)), rows], axis=1)


def _comparison(m: _Method, pair: tuple, path, out_plan) -> dict[str, pd.DataFrame]:
    """One comparison's rows of each table (by name); its transport plan is written here."""
    a, b = pair
    ta, tb = m.tables[a], m.tables[b]
    ids_a, ids_b = ta["theme_id"].tolist(), tb["theme_id"].tolist()
    S0 = m.to_scale(read_similarity(path, ta["theme_id"], tb["theme_id"]))
    head, out = {"method": m.name, "set_a": a, "set_b": b}, {}
    S, flag = z_scale(S0, m.W0[a], m.W0[b]) if m.on_z else (S0, "")
    if a in m.W0 and b in m.W0 and m.decision:
        out["decisions"] = _headed(head, _decision_changes(m, pair, S0, (S, flag)))
    if not np.isfinite(S).all():
        # z undefined for some theme (set too small, zero spread): flagged, not scored.
        out["comparisons"] = _headed(head, _flagged_rows(S, m.st.thresholds, flag))
        write_parquet(plan_long(np.full(S.shape, np.nan), ids_a, ids_b), out_plan, checksum=False)
        return out
    null_pool = _null_pool(m, pair)
    own = a == m.reference and np.isfinite(m.ceiling)
    rows, extra = comparison_rows(
        S,
        m.st,
        W_a=m.W.get(a),
        W_b=m.W.get(b),
        null_pool=null_pool,
        mass_ceiling=m.ceiling if own else 1.0,
        # declared groups (theme files' `group`): cluster-robust intervals
        groups_a=list(theme_groups(ta).values()),
        groups_b=list(theme_groups(tb).values()),
    )
    if extra["null"] is not None:
        pool_size = null_pool.shape[1]
        _log_null_resolution(m.name, a, b, extra["null"], pool_size, len(tb), m.st, null_pool)
    if m.on_z:
        rows["scale_flag"] = flag
    if m.source is not None:
        rows.insert(1, "threshold_source", m.source)
    out["comparisons"] = _headed(head, rows)
    sw, _ = sweep_rows(S, m.st, m.grid, plan=extra["plan"], references=extra["references"])
    out["sweep"] = _headed(head, sw)
    W_a, W_b = m.W.get(a), m.W.get(b)
    tt = theme_rows(S, m.st, ta, tb, W_a=W_a, W_b=W_b, null_pool=null_pool, reused=extra)
    out["themes"] = _headed(head, tt)
    plan = extra["plan"]
    # per pair: the transport manifest lists it with its sha256
    write_parquet(plan_long(plan, ids_a, ids_b), out_plan, checksum=False)
    theta, share = m.st.thresholds[0], m.st.transport["min_share"]
    sj = splits_and_joins(plan, ids_a, ids_b, min_share=share, S=S, threshold=theta, op=m.st.op)
    sj.insert(0, "threshold", theta)
    out["splits"] = _headed(head, sj)
    return out


def _decision_changes(m: _Method, pair: tuple, S0, scaled) -> pd.DataFrame:
    """The raw-versus-z decision table of one comparison (metrics.scales.decision_changes)."""
    a, b = pair
    scaled = scaled if m.on_z else z_scale(S0, m.W0[a], m.W0[b])
    ids_a, ids_b = m.tables[a]["theme_id"].tolist(), m.tables[b]["theme_id"].tolist()
    raw, z = m.decision["raw"], m.decision["z"]
    return decision_changes(S0, scaled, raw, z, m.st.op, ids_a, ids_b, m.st.z_alpha)


def _null_pool(m: _Method, pair: tuple) -> np.ndarray | None:
    """B's word-salad pool against A's themes on the method's scale (its kind's null model);
    None without one."""
    a, b = pair
    ta, tb = m.tables[a], m.tables[b]
    if a in m.embeddings and a not in m.read:  # one read per A set, not per comparison
        m.read[a] = read_embeddings(m.embeddings[a])[1]

    def null_scale(M, W_null, W_a=m.W0[a] if m.on_z else None):
        # Under z each null set is standardised against its own within-set spread,
        # as a real B set is.
        M = m.to_scale(M)
        return M if W_a is None else z_scale(M, W_a, m.to_scale(W_null))[0]

    pool, seed = m.st.null_model["pool"], m.st.null_model["seed"]
    null_pool = get_kind(m.kind).null_pool(
        ta, tb, m.nulls.get(b), pool, seed, null_scale, m.read.get(a), spec=m.spec
    )
    if null_pool is not None and not np.isfinite(null_pool).all():
        null_pool = _defined_null(m.name, a, b, null_pool, len(tb))
    return null_pool


def _scored_first(frames: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """Column order from a scored comparison, whichever comes first (flagged rows lack most)."""
    if not frames:
        return frames
    widest = max(frames, key=lambda f: f.shape[1])
    cols = list(widest.columns) + [c for f in frames for c in f.columns if c not in widest]
    cols = list(dict.fromkeys(cols))
    return [f.reindex(columns=cols) for f in frames]


def _write_thresholds(method: str, st, source: list | None, out) -> None:
    sources = source or [FROM_CONFIG] * len(st.thresholds)
    write_csv(threshold_table(method, st.thresholds, sources, st.op, st.scale, st.clamp), out)


def _write_decisions(changes: list[pd.DataFrame], out) -> None:
    head = ["method", "set_a", "set_b"]
    df = (
        pd.concat(changes, ignore_index=True)
        if changes
        else pd.DataFrame(columns=head + DECISION_COLUMNS)
    )
    write_csv(df, out)
