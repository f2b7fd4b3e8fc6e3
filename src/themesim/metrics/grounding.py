"""Grounded agreement: do two theme sets label the same transcript segments?

The unit is the transcript segment. Each set's labels are rows (transcript, segment, theme_id,
source[, score]); a segment may carry several themes. Its top-1 theme is the one with the
highest `score` (coded and quote labels score 1, assigned labels their similarity), ties to the
theme listed first in the set. Every statistic comes from a library: scikit-learn (AMI, ARI,
Cohen's κ), krippendorff (α), scipy (Hungarian assignment, Spearman). Formulas:
docs/grounding.md.

Inference treats the transcript, not the segment, as the sampled unit: segments of one
interview hang together, and a resample that repeats segments makes two labelings look more
alike than they are. Intervals leave one transcript out at a time (jackknife); the test of
agreement above chance rotates B's labels within each transcript and speaker, keeping B's runs
of one code (topic blocks), so that serial dependence along a transcript is kept under the null.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import krippendorff
import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from scipy.stats import spearmanr
from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score, cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from themesim.metrics.coverage import hungarian_pairs, matches
from themesim.metrics.kappa import kappa_counts_array

KAPPA_GOOD = 0.4  # "moderate" agreement (Landis & Koch) — the share of pairs reaching it
PAIR_COLUMNS = ["a_id", "b_id", "n_a", "n_b", "n_both", "iou", "kappa", "similarity", "text_pair"]
METRIC_COLUMNS = [
    "n_segments",
    "n_transcripts",
    "n_both_labelled",
    "data_coverage_a",
    "data_coverage_b",
    "ami",
    "ari",
    "grounded_hungarian_n_matched",
    "grounded_hungarian_f1",
    "text_hungarian_f1",
    "text_pairs",
    "text_pairs_median_kappa",
    "text_pairs_share_kappa_ge_0_4",
    "text_pairs_krippendorff_alpha",
    "text_data_spearman",
]
# Columns that need S on the method's scale: NaN when it is undefined there.
TEXT_METRICS = [c for c in METRIC_COLUMNS if c.startswith("text_")]
# The metrics with intervals, in column order, and the interval each is clipped to (never
# past the estimate).
CI_BOUNDS = {
    "data_coverage_a": (0.0, 1.0),
    "data_coverage_b": (0.0, 1.0),
    "ami": (-1.0, 1.0),
    "ari": (-1.0, 1.0),
    "grounded_hungarian_f1": (0.0, 1.0),
    "text_pairs_median_kappa": (-1.0, 1.0),
    "text_pairs_krippendorff_alpha": (-1.0, 1.0),
    "text_data_spearman": (-1.0, 1.0),
}
CI_METRICS = list(CI_BOUNDS)
CI_METHOD = "transcript_jackknife"
# Intervals withheld (NaN) below this many transcripts: noise in a few transcripts' IoU and κ
# pulls these statistics towards 0, which a jackknife (spread) does not see, and no interval
# the suite tried held 0.93 there (docs/validity.md, "Grounding inference"). ρ: never given.
BIASED_CI_MIN_TRANSCRIPTS = {"text_pairs_median_kappa": 20, "text_data_spearman": math.inf}
NOT_GIVEN = "not given: biased by segment noise, see docs/validity.md"
# Agreement above chance: each gets `<metric>_p` from the run-preserving cyclic shift test
# (a data coverage is one set's share of the segments, not an agreement of the two).
TEST_METRICS = [m for m in CI_METRICS if not m.startswith("data_coverage_")]
P_METHOD = "run_preserving_cyclic_shift"
# The chance-corrected figures (agreement beyond what chance gives: AMI, ARI, κ, α) are
# refused (NaN, with `withheld_reason`) over fewer transcripts than their interval needs: the
# transcript is the sampled unit, and with one transcript no interval leaves one out, so a
# figure such as "AMI 1.00" (two codings of a few segments of one interview) would be shown
# with nothing to judge it by. The figures that are plain shares and counts stay.
CHANCE_CORRECTED = [
    "ami",
    "ari",
    "text_pairs_median_kappa",
    "text_pairs_share_kappa_ge_0_4",
    "text_pairs_krippendorff_alpha",
]
CHANCE_MIN_TRANSCRIPTS = 2  # the delete-one-transcript jackknife's least
P_TOL = 1e-12  # a permuted statistic this close below the observed one counts as reaching it


TRANSCRIPT_COUNT_COLUMNS = ["transcript", "a_id", "b_id", "n", "n_a", "n_b", "n_both"]


def transcript_counts(A, B, a_ids, b_ids, transcripts) -> pd.DataFrame:
    """Per transcript and theme pair, the 2x2 table's margins: n segments, n_a coded with the
    A theme, n_b with the B theme, n_both with both (TRANSCRIPT_COUNT_COLUMNS). Summed over
    transcripts they give grounding_pairs.csv's counts, so a κ with one transcript left out
    is kappa_counts of the sums over the others."""
    A, B = np.asarray(A, dtype=np.int64), np.asarray(B, dtype=np.int64)
    transcripts = np.asarray(transcripts).astype(str)
    na, nb = len(a_ids), len(b_ids)
    frames = []
    for t in dict.fromkeys(transcripts):
        m = transcripts == t
        a, b = A[m], B[m]
        frames.append(
            pd.DataFrame(
                {
                    "transcript": t,
                    "a_id": np.repeat(np.asarray(a_ids, dtype=object), nb),
                    "b_id": np.tile(np.asarray(b_ids, dtype=object), na),
                    "n": int(m.sum()),
                    "n_a": np.repeat(a.sum(axis=0), nb),
                    "n_b": np.tile(b.sum(axis=0), na),
                    "n_both": (a.T @ b).ravel(),
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=TRANSCRIPT_COUNT_COLUMNS)
    return pd.concat(frames, ignore_index=True)[TRANSCRIPT_COUNT_COLUMNS]


def label_matrix(labels: pd.DataFrame, segments: pd.DataFrame, ids: Sequence[str]) -> np.ndarray:
    """Boolean segments × themes: does theme j label segment i? Rows follow `segments`."""
    pos = {
        (t, int(s)): i
        for i, (t, s) in enumerate(zip(segments["transcript"], segments["segment"], strict=True))
    }
    col = {t: j for j, t in enumerate(ids)}
    X = np.zeros((len(segments), len(ids)), dtype=bool)
    for t, s, tid in zip(labels["transcript"], labels["segment"], labels["theme_id"], strict=True):
        i, j = pos.get((t, int(s))), col.get(tid)
        if i is None or j is None:
            raise ValueError(f"label ({t}, {s}, {tid}) is not a known segment and theme")
        X[i, j] = True
    return X


def top1(labels: pd.DataFrame, segments: pd.DataFrame, ids: Sequence[str]) -> np.ndarray:
    """Index into `ids` of each segment's top-1 theme, -1 for an unlabelled segment."""
    pos = {
        (t, int(s)): i
        for i, (t, s) in enumerate(zip(segments["transcript"], segments["segment"], strict=True))
    }
    col = {t: j for j, t in enumerate(ids)}
    score = labels["score"] if "score" in labels.columns else pd.Series(1.0, index=labels.index)
    best = np.full(len(segments), -1)
    best_score = np.full(len(segments), -np.inf)
    for t, s, tid, sc in zip(
        labels["transcript"], labels["segment"], labels["theme_id"], score, strict=True
    ):
        i, j = pos[(t, int(s))], col[tid]
        sc = float(sc)
        if sc > best_score[i] or (sc == best_score[i] and j < best[i]):
            best[i], best_score[i] = j, sc
    return best


def iou_matrix(
    A: np.ndarray, B: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(n_both, n_a, n_b, IoU) per theme pair; IoU is 0 when neither theme labels a segment."""
    Ai, Bi = A.astype(np.int64), B.astype(np.int64)
    both = Ai.T @ Bi
    n_a, n_b = Ai.sum(axis=0), Bi.sum(axis=0)
    return both, n_a, n_b, _iou(both, n_a, n_b)


def _iou(both: np.ndarray, n_a: np.ndarray, n_b: np.ndarray) -> np.ndarray:
    union = n_a[:, None] + n_b[None, :] - both
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, both / np.where(union > 0, union, 1), 0.0)


def kappa(x: np.ndarray, y: np.ndarray) -> float:
    """Cohen's κ of two binary labelings (scikit-learn); NaN when both are constant and equal
    (chance agreement 1: κ undefined)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns on the undefined case it sets to NaN
        return float(cohen_kappa_score(x, y, labels=[False, True]))


def kappa_counts(n_both: int, n_a: int, n_b: int, n: int) -> float:
    """Cohen's κ of two binary labelings from their 2×2 table (statsmodels `cohens_kappa`;
    equal to scikit-learn's on the same labelings, much cheaper per call): both, only A,
    only B, neither. NaN when both labelings are constant and equal (κ undefined)."""
    table = np.array([[n_both, n_a - n_both], [n_b - n_both, n - n_a - n_b + n_both]], float)
    if (table > 0).sum() == 1 and (table[0, 0] > 0 or table[1, 1] > 0):
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # κ alone: the full results also build test statistics, 20 times the cost.
        return float(cohens_kappa(table, return_results=False))


def text_pairs(S: np.ndarray, threshold: float | None, op: str = "ge") -> list[tuple[int, int]]:
    """The text-based Hungarian pairs: max-sum assignment on S, kept when S passes
    `threshold` (all assigned pairs when None). S and threshold on the method's scale
    (metrics.method_scale), as the metric tables decide."""
    rows, cols = hungarian_pairs(S)
    if threshold is None:
        return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True)]
    M = matches(S, threshold, op)
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True) if M[r, c]]


def grounded_hungarian(iou: np.ndarray, min_iou: float) -> list[tuple[int, int]]:
    """Max-sum assignment on the IoU matrix; pairs with IoU ≥ min_iou."""
    rows, cols = linear_sum_assignment(iou, maximize=True)
    return [
        (int(r), int(c))
        for r, c in zip(rows, cols, strict=True)
        if iou[r, c] >= min_iou and iou[r, c] > 0
    ]


def _f1(k: int, n_a: int, n_b: int) -> float:
    return 2 * k / (n_a + n_b) if n_a + n_b else math.nan


def alpha_mapped(top_a: np.ndarray, top_b: np.ndarray, pairs: list[tuple[int, int]]) -> float:
    """Krippendorff's α (nominal) of A's and B's top-1 labels, B's mapped through the pairs
    onto A's themes; a B theme outside the pairs stays its own category. Unlabelled segments
    are missing values."""
    n_a = int(max(top_a.max(initial=-1), max((a for a, _ in pairs), default=-1))) + 1
    mapped = {b: a for a, b in pairs}
    a = np.where(top_a >= 0, top_a, np.nan).astype(float)
    b = np.array(
        [np.nan if v < 0 else mapped.get(int(v), n_a + int(v)) for v in top_b], dtype=float
    )
    both = ~np.isnan(a) & ~np.isnan(b)
    if both.sum() < 1 or len(set(np.concatenate([a[both], b[both]]).tolist())) < 2:
        return math.nan  # α needs pairable values of at least two categories
    return float(
        krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement="nominal")
    )


def _partition(
    top_a: np.ndarray, top_b: np.ndarray, shape: tuple[int, int] | None = None
) -> tuple[float, float, int]:
    """(AMI, ARI, n both label) of the top-1 labelings; with `shape` (A's and B's theme
    counts) from their contingency table (:func:`partition_scores`, scikit-learn's numbers
    bit for bit without its input checks: the jackknife's replicates)."""
    both = (top_a >= 0) & (top_b >= 0)
    n = int(both.sum())
    if n < 2:
        return math.nan, math.nan, n
    x, y = top_a[both], top_b[both]
    if shape is not None:
        C = np.bincount(x * shape[1] + y, minlength=shape[0] * shape[1])
        ami, ari = partition_scores(C.reshape(shape))
        return ami, ari, n
    return float(adjusted_mutual_info_score(x, y)), float(adjusted_rand_score(x, y)), n


def _spearman(S: np.ndarray, iou: np.ndarray) -> float:
    x, y = S.ravel(), iou.ravel()
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan  # constant ranks: no correlation defined
    return float(spearmanr(x, y).statistic)


def _pair_kappas(both, n_a, n_b, n: int, tpairs) -> np.ndarray:
    return np.array(
        [kappa_counts(int(both[i, j]), int(n_a[i]), int(n_b[j]), n) for i, j in tpairs],
        dtype=float,
    )


def _median_kappa(kappas: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return (
            float(np.nanmedian(kappas)) if len(kappas) and not np.isnan(kappas).all() else math.nan
        )


def _spearman_ranked(rank_x: np.ndarray | None, y: np.ndarray) -> float:
    """:func:`_spearman` with x's ranks given (None: x constant or too short): scipy's
    spearmanr step for step (ranks stacked as its `apply_along_axis` lays them out, then
    np.corrcoef), for the bootstrap, whose S stays while the IoU changes."""
    y = y.ravel()
    if rank_x is None or np.ptp(y) == 0:
        return math.nan
    ranked = np.stack([rank_x, average_ranks(y)]).T
    return float(np.corrcoef(ranked, rowvar=False)[1, 0])


def average_ranks(y: np.ndarray) -> np.ndarray:
    """scipy.stats.rankdata(y) (ties: their average rank) for a 1-d array, without its
    checks: the ranks are halves of integers, exact in float64, so the bits are equal."""
    order = np.argsort(y, kind="mergesort")
    ys = y[order]
    new = np.r_[True, ys[1:] != ys[:-1]]
    first = np.flatnonzero(new)  # start of each run of ties in sorted order
    ends = np.r_[first[1:], y.size]
    rank = (first + ends + 1) / 2.0  # average of the 1-based positions first+1 … ends
    out = np.empty(y.size)
    out[order] = np.repeat(rank, ends - first)
    return out


def _summary(
    A: np.ndarray,
    B: np.ndarray,
    top_a: np.ndarray,
    top_b: np.ndarray,
    S: np.ndarray,
    tpairs: list[tuple[int, int]] | None,
    min_iou: float,
    fast: bool = False,
) -> tuple[dict, np.ndarray]:
    """tpairs None: S is undefined on the method's scale (z of a set without spread), so
    every text-based column is NaN. fast: AMI, ARI and κ from their tables
    (:func:`partition_scores`, :func:`kappa_counts_array`: the same numbers bit for bit,
    without the libraries' per-call checks), for the jackknife's replicates."""
    both, n_a, n_b, iou = iou_matrix(A, B)
    text = tpairs is not None
    tpairs = tpairs or []
    ami, ari, n_both = _partition(top_a, top_b, A.shape[1:] + B.shape[1:] if fast else None)
    g = grounded_hungarian(iou, min_iou)
    n = len(A)
    if fast:
        ti, tj = [i for i, _ in tpairs], [j for _, j in tpairs]
        kappas = kappa_counts_array(both[ti, tj], n_a[ti], n_b[tj], n) if tpairs else np.array([])
    else:
        kappas = _pair_kappas(both, n_a, n_b, n, tpairs)
    med = _median_kappa(kappas)
    row = {
        "n_segments": n,
        "n_both_labelled": n_both,
        "data_coverage_a": float(A.any(axis=1).mean()) if n else math.nan,
        "data_coverage_b": float(B.any(axis=1).mean()) if n else math.nan,
        "ami": ami,
        "ari": ari,
        "grounded_hungarian_n_matched": len(g),
        "grounded_hungarian_f1": _f1(len(g), A.shape[1], B.shape[1]),
        "text_pairs": len(tpairs),
        "text_pairs_median_kappa": med,
        "text_pairs_share_kappa_ge_0_4": float((kappas >= KAPPA_GOOD).mean())
        if len(kappas)
        else math.nan,
        "text_pairs_krippendorff_alpha": alpha_mapped(top_a, top_b, tpairs),
        "text_data_spearman": _spearman(S, iou) if text else math.nan,
    }
    if not text:
        row |= {k: math.nan for k in TEXT_METRICS}
    return row, iou


def grounding(
    A: np.ndarray,
    B: np.ndarray,
    top_a: np.ndarray,
    top_b: np.ndarray,
    S: np.ndarray,
    a_ids: Sequence[str],
    b_ids: Sequence[str],
    *,
    min_iou: float,
    threshold: float | None,
    op: str = "ge",
    transcripts: np.ndarray | None = None,
    strata: np.ndarray | None = None,
    intervals: bool = False,
    n_perm: int = 0,
    seed: int = 0,
    level: float = 0.95,
    withhold_biased: bool = True,
) -> tuple[dict, pd.DataFrame]:
    """(metrics row, pair table) of one comparison.

    A, B: boolean segments × themes label matrices over every segment; top_a, top_b: top-1
    indices (-1 = unlabelled); S: the method's text similarity (A themes × B themes) on its
    scale (metrics.method_scale; NaN cells where z is undefined: no text columns then);
    threshold/op: the method's first threshold on that scale, for the text Hungarian pairs.
    transcripts: each segment's transcript (any labels; None: one transcript); strata: the
    shift test's strata, each a stratum's segments in transcript order (None: the
    transcripts).
    intervals adds `<metric>_ci_low/_ci_high` from the delete-one-transcript jackknife
    (:func:`jackknife_interval`) and `ci_method`, less those :func:`withhold_biased` withholds
    (withhold_biased=False: all of them, for the validation suite); n_perm > 0 adds
    `<metric>_p`, the run-preserving cyclic shift test of agreement above chance
    (:func:`permutation_test`). Over fewer than CHANCE_MIN_TRANSCRIPTS transcripts the
    chance-corrected figures are NaN and `withheld_reason` says why
    (:func:`withheld_few_transcripts`; withhold_biased=False keeps them).
    """
    S = np.asarray(S, dtype=float)
    if S.shape != (A.shape[1], B.shape[1]):
        raise ValueError(
            f"similarity shape {S.shape} does not match themes {A.shape[1]}×{B.shape[1]}"
        )
    # As the metric tables: a comparison with S undefined on the z scale is not text-scored.
    tpairs = text_pairs(S, threshold, op) if np.isfinite(S).all() else None
    row, iou = _summary(A, B, top_a, top_b, S, tpairs, min_iou)
    if tpairs is not None:
        row["text_hungarian_f1"] = _f1(len(tpairs), S.shape[0], S.shape[1])
    transcripts = np.zeros(len(A), dtype=np.int64) if transcripts is None else transcripts
    transcripts = _codes(transcripts)
    row["n_transcripts"] = int(len(np.unique(transcripts)))
    row = {k: row[k] for k in METRIC_COLUMNS}
    both, n_a, n_b, _ = iou_matrix(A, B)
    tp = set(tpairs or [])
    pairs = pd.DataFrame(
        [
            (
                a_ids[i],
                b_ids[j],
                int(n_a[i]),
                int(n_b[j]),
                int(both[i, j]),
                float(iou[i, j]),
                kappa_counts(int(both[i, j]), int(n_a[i]), int(n_b[j]), len(A)),
                float(S[i, j]),
                (i, j) in tp,
            )
            for i in range(len(a_ids))
            for j in range(len(b_ids))
        ],
        columns=PAIR_COLUMNS,
    )
    if intervals:
        row.update(_jackknife(A, B, top_a, top_b, S, tpairs, min_iou, transcripts, row, level))
        if withhold_biased:
            row.update(withheld_intervals(row))
        from themesim.metrics.contract import grounding_flags

        # fewer transcripts than the suite measured the jackknife on: flagged (run-time)
        row["contract"] = grounding_flags(row["n_transcripts"])
    if n_perm:
        strata = transcripts if strata is None else _codes(strata)
        row.update(permutation_test(A, B, top_a, top_b, S, tpairs, min_iou, strata, n_perm, seed))
    if withhold_biased:
        row.update(withheld_few_transcripts(row))
    return row, pairs


def withheld_few_transcripts(row: dict) -> dict:
    """CHANCE_CORRECTED figures of a row over fewer than CHANCE_MIN_TRANSCRIPTS transcripts,
    with their intervals and p values, set to NaN, and `withheld_reason` saying which and why
    ("" when none is withheld: the column is always there)."""
    g = row["n_transcripts"]
    if g >= CHANCE_MIN_TRANSCRIPTS:
        return {"withheld_reason": ""}
    ends = ("", "_ci_low", "_ci_high", "_p")
    out: dict = {f"{m}{e}": math.nan for m in CHANCE_CORRECTED for e in ends if f"{m}{e}" in row}
    out["withheld_reason"] = (
        f"{', '.join(CHANCE_CORRECTED)}: not given over {g} transcript(s); a chance-corrected "
        f"figure needs at least {CHANCE_MIN_TRANSCRIPTS} (its interval leaves one transcript "
        "out at a time). Add transcripts to read agreement beyond chance"
    )
    return out


def _codes(labels) -> np.ndarray:
    """Integer codes of any labels (transcript names, (transcript, speaker) keys)."""
    return np.unique(np.asarray(labels), return_inverse=True)[1].astype(np.int64).reshape(-1)


def jackknife_interval(
    estimate: float, replicates, level: float = 0.95, bounds=(-math.inf, math.inf)
) -> tuple[float, float]:
    """The delete-one-group jackknife interval θ̂ ± t(G' − 1) · se of a statistic θ, with
    se² = (G' − 1) / G' · Σ (θ_(g) − θ_(·))² over the G' replicates θ_(g) that are defined
    (each leaves one transcript out; θ_(·) their mean), clipped to the statistic's `bounds`
    but never past θ̂: it always contains the estimate. NaN with fewer than 2 replicates."""
    from scipy.stats import t as student_t

    r = np.asarray(replicates, dtype=float)
    r = r[np.isfinite(r)]
    if not np.isfinite(estimate) or r.size < 2:
        return math.nan, math.nan
    g = r.size
    se = math.sqrt((g - 1) / g * float(np.sum((r - r.mean()) ** 2)))
    h = float(student_t.ppf(0.5 * (1 + level), g - 1)) * se
    lo, hi = bounds
    return min(estimate, max(estimate - h, lo)), max(estimate, min(estimate + h, hi))


def _loo_iou(A, B, transcripts) -> np.ndarray:
    """IoU of every theme pair with each transcript left out: (G, n_a, n_b)."""
    groups = np.unique(transcripts)
    Ai, Bi = A.astype(np.int64), B.astype(np.int64)
    both, n_a, n_b = Ai.T @ Bi, Ai.sum(axis=0), Bi.sum(axis=0)
    out = np.empty((len(groups), A.shape[1], B.shape[1]))
    for g, t in enumerate(groups):
        m = transcripts == t
        out[g] = _iou(both - Ai[m].T @ Bi[m], n_a - Ai[m].sum(axis=0), n_b - Bi[m].sum(axis=0))
    return out


def iou_intervals(A, B, transcripts, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Per theme pair an interval for its IoU, a share of the segments either theme labels
    (n = that union): Wilson's score interval (statsmodels proportion_confint) on the
    effective size n / deff, deff = the transcript jackknife's variance over the binomial
    one (at least 1: never narrower than independent segments). Wilson's interval is not
    empty where the IoU is 0 or 1 in the sample, as the jackknife's would be. A pair that
    neither theme ever labels: [0, 0]."""
    from statsmodels.stats.proportion import proportion_confint

    both, n_a, n_b, iou = iou_matrix(A, B)
    union = (n_a[:, None] + n_b[None, :] - both).astype(float)
    reps = _loo_iou(A, B, transcripts)
    g = reps.shape[0]
    v_jk = (g - 1) / g * ((reps - reps.mean(axis=0)) ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        v_bin = iou * (1 - iou) / union
        deff = np.where(v_bin > 0, np.maximum(v_jk / v_bin, 1.0), 1.0)
    n_eff = np.where(union > 0, union / deff, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = proportion_confint(iou * n_eff, n_eff, alpha=1 - level, method="wilson")
    empty = union == 0
    lo, hi = np.where(empty, 0.0, np.minimum(lo, iou)), np.where(empty, 0.0, np.maximum(hi, iou))
    return lo, hi


def grounded_f1_interval(A, B, transcripts, min_iou: float, level: float = 0.95):
    """grounded_hungarian_f1 counts pairs past min_iou, which a jackknife of the count itself
    cannot bound (it jumps). From each pair's IoU interval [lo, hi] (:func:`iou_intervals`):
    the low end counts the estimate's matched pairs whose lo passes min_iou, the high end
    the most pairs that can be matched one-to-one among those whose hi passes (scipy
    maximum_bipartite_matching); 2k / (n_a + n_b) of each."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    _, _, _, iou = iou_matrix(A, B)
    lo, hi = iou_intervals(A, B, transcripts, level)
    matched = grounded_hungarian(iou, min_iou)
    k_lo = sum(1 for i, j in matched if lo[i, j] >= min_iou and lo[i, j] > 0)
    ok = (hi >= min_iou) & (hi > 0)
    match = maximum_bipartite_matching(csr_matrix(ok.astype(np.int8)), perm_type="column")
    k_hi = int((match >= 0).sum())
    return _f1(k_lo, A.shape[1], B.shape[1]), _f1(k_hi, A.shape[1], B.shape[1])


def _jackknife(A, B, top_a, top_b, S, tpairs, min_iou, transcripts, row, level) -> dict:
    """CI_METRICS' jackknife intervals: each replicate is the full statistic on the segments
    of every transcript but one (no segment ever repeats); grounded_hungarian_f1 from its
    pairs' IoU intervals (:func:`grounded_f1_interval`)."""
    groups = np.unique(transcripts)
    reps = np.full((len(groups), len(CI_METRICS)), np.nan)
    if len(groups) >= 2:
        for g, t in enumerate(groups):
            keep = transcripts != t
            res, _ = _summary(
                A[keep], B[keep], top_a[keep], top_b[keep], S, tpairs, min_iou, fast=True
            )
            reps[g] = [res[m] for m in CI_METRICS]
    out: dict = {}
    for k, m in enumerate(CI_METRICS):
        lo, hi = jackknife_interval(row[m], reps[:, k], level, CI_BOUNDS[m])
        out[f"{m}_ci_low"], out[f"{m}_ci_high"] = lo, hi
    if len(groups) >= 2:
        lo, hi = grounded_f1_interval(A, B, transcripts, min_iou, level)
        f1 = row["grounded_hungarian_f1"]
        out["grounded_hungarian_f1_ci_low"] = min(lo, f1)
        out["grounded_hungarian_f1_ci_high"] = max(hi, f1)
    out["ci_method"] = CI_METHOD if len(groups) >= 2 else "none (one transcript)"
    return out


def withheld_intervals(row: dict) -> dict:
    """The jackknife row's intervals that BIASED_CI_MIN_TRANSCRIPTS withholds at its
    n_transcripts, set to NaN, and a ci_method naming them and why (never a silent NaN)."""
    if not str(row.get("ci_method", "")).startswith(CI_METHOD):
        return {}  # one transcript: no interval at all, and ci_method already says so
    g = row["n_transcripts"]
    names = [
        m if math.isinf(g_min) else f"{m} (under {g_min} transcripts)"
        for m, g_min in BIASED_CI_MIN_TRANSCRIPTS.items()
        if g < g_min
    ]
    out: dict = {
        f"{m}_ci_{end}": math.nan
        for m, g_min in BIASED_CI_MIN_TRANSCRIPTS.items()
        if g < g_min
        for end in ("low", "high")
    }
    out["ci_method"] = f"{CI_METHOD}; {', '.join(names)}: {NOT_GIVEN}" if names else CI_METHOD
    return out


def alpha_from_table(C: np.ndarray, pairs: list[tuple[int, int]]) -> float:
    """:func:`alpha_mapped` from the contingency table C of the segments both label (rows:
    A's top-1 themes, columns: B's): Krippendorff's nominal α of two coders, whose pairable
    units are exactly those segments. Coincidences o = M + Mᵀ, M the table with B's
    columns mapped onto A's themes through the pairs (a B theme outside them its own
    category); α = 1 − (n − 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k. Equal to the krippendorff
    package to rounding (tests/test_grounding.py); the permutation test's inner loop."""
    C = np.asarray(C, dtype=np.float64)
    n_a, n_b = C.shape
    col = np.arange(n_a, n_a + n_b)
    for a, b in pairs:
        col[b] = a
    M = np.zeros((n_a + n_b, n_a + n_b))
    for j in range(n_b):
        M[:n_a, col[j]] += C[:, j]
    o = M + M.T
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if (n_c > 0).sum() < 2:
        return math.nan
    off = n - np.trace(o)
    expected = n * n - float(n_c @ n_c)
    return float(1.0 - (n - 1) * off / expected)


class _Perm:
    """What every permuted statistic of one comparison shares: B's rows move, A's
    and both sets' label counts stay."""

    def __init__(self, A, B, top_a, top_b, S, tpairs, min_iou):
        from scipy.stats import rankdata

        self.Ai, self.Bi = A.astype(np.int64), B.astype(np.int64)
        self.n_a, self.n_b = self.Ai.sum(axis=0), self.Bi.sum(axis=0)
        self.top_a, self.top_b = top_a, top_b
        self.shape = (A.shape[1], B.shape[1])
        self.n, self.min_iou = len(A), min_iou
        self.text = tpairs is not None
        self.tpairs = tpairs or []
        self.ti = np.array([i for i, _ in self.tpairs], dtype=np.int64)
        self.tj = np.array([j for _, j in self.tpairs], dtype=np.int64)
        s = S.ravel()
        self.rank_s = rankdata(s) if self.text and s.size >= 3 and np.ptp(s) > 0 else None

    def stats(self, perm: np.ndarray) -> list[float]:
        """TEST_METRICS with B's segment i labelled as B's segment perm[i]."""
        n_a, n_b = self.shape
        both = self.Ai.T @ self.Bi[perm]
        iou = _iou(both, self.n_a, self.n_b)
        tb = self.top_b[perm]
        paired = (self.top_a >= 0) & (tb >= 0)
        C = np.bincount(self.top_a[paired] * n_b + tb[paired], minlength=n_a * n_b)
        C = C.reshape(n_a, n_b)
        ami, ari = partition_scores(C) if C.sum() >= 2 else (math.nan, math.nan)
        g = grounded_hungarian(iou, self.min_iou)
        if self.text:
            kappas = kappa_counts_array(
                both[self.ti, self.tj], self.n_a[self.ti], self.n_b[self.tj], self.n
            )
            med = _median_kappa(kappas)
            alpha = alpha_from_table(C, self.tpairs) if C.sum() >= 1 else math.nan
            rho = _spearman_ranked(self.rank_s, iou)
        else:
            med = alpha = rho = math.nan
        return [ami, ari, _f1(len(g), n_a, n_b), med, alpha, rho]


def run_keys(top_b: np.ndarray, strata: np.ndarray) -> np.ndarray:
    """The code each segment's run of B is read by: B's top-1 theme, an uncoded segment
    taking the code before it in its stratum (at a stratum's start, the first code after; a
    stratum B never codes stays -1). Segments are in transcript order within a stratum."""
    key = np.asarray(top_b, dtype=np.int64).copy()
    for rows in _stratum_rows(strata):
        v = key[rows]
        coded = np.flatnonzero(v >= 0)
        if coded.size and coded.size < v.size:
            last = np.maximum.accumulate(np.where(v >= 0, np.arange(v.size), -1))
            key[rows] = v[np.where(last < 0, coded[0], last)]
    return key


def _stratum_rows(strata: np.ndarray) -> list[np.ndarray]:
    """Each stratum's rows, in their order (the transcript's), strata in order of codes."""
    order = np.argsort(strata, kind="stable")
    cuts = np.flatnonzero(np.diff(strata[order])) + 1
    return np.split(order, cuts) if order.size else []


def run_preserving_starts(key: np.ndarray) -> np.ndarray:
    """Where a rotation of one stratum's sequence may start so that it keeps B's runs.
    Read round a circle, the sequence has runs (maximal stretches of one code); a rotation
    that starts inside a run cuts it in two and joins the two ends, which the coding never
    did (at stay 0.9 that junction alone put the plain cyclic shift's type-I error at 0.10).
    So: when the two ends differ, start at any run's start (the same runs, codes and lengths,
    in the same cyclic order); when they are the same code (one run wrapping round), start
    inside that run (every other run kept, the wrapping one split anew). One run: anywhere."""
    m = key.size
    starts = np.flatnonzero(key[1:] != key[:-1]) + 1
    if starts.size == 0:
        return np.arange(m)
    if key[0] != key[-1]:
        return np.r_[0, starts]
    return np.r_[0, np.arange(1, starts[0]), np.arange(starts[-1] + 1, m)]


class _Shifts:
    """The run-preserving cyclic shifts of B within each stratum (:func:`permutation_test`):
    a stratum's choices are (reflected?, start) pairs, its rows in transcript order or
    reversed, rotated to an allowed start (:func:`run_preserving_starts` of that order's
    keys). A stratum whose B rows are all the same has one choice (moving them changes
    nothing); one of 2 or fewer rows is not reflected (reflection repeats its rotations)."""

    def __init__(self, B: np.ndarray, top_b: np.ndarray, strata: np.ndarray):
        key = run_keys(top_b, strata)
        rows_b = np.asarray(B)
        self.n = len(top_b)
        self.rows, self.choices = [], []
        for rows in _stratum_rows(strata):
            same = (rows_b[rows] == rows_b[rows[0]]).all() and (top_b[rows] == top_b[rows[0]]).all()
            if rows.size < 2 or same:
                continue
            opts = [(False, int(c)) for c in run_preserving_starts(key[rows])]
            if rows.size > 2:
                opts += [(True, int(c)) for c in run_preserving_starts(key[rows[::-1]])]
            self.rows.append(rows)
            self.choices.append(opts)
        self.total = math.prod(len(c) for c in self.choices)

    def arrange(self, pick) -> np.ndarray:
        """The arrangement with choice pick[k] in the k-th stratum that moves: B's row for
        segment i is B's row perm[i]."""
        perm = np.arange(self.n)
        for rows, opts, k in zip(self.rows, self.choices, pick, strict=True):
            flip, c = opts[k]
            seq = rows[::-1] if flip else rows
            perm[rows] = np.roll(seq, -c)
        return perm

    def all(self):
        """Every arrangement, the identity first."""
        import itertools

        for pick in itertools.product(*(range(len(c)) for c in self.choices)):
            yield self.arrange(pick)

    def draws(self, n_perm: int, seed: int):
        """n_perm arrangements, each stratum's choice drawn uniformly (numpy default_rng)."""
        rng = np.random.default_rng(seed)
        sizes = np.array([len(c) for c in self.choices], dtype=np.int64)
        for _ in range(n_perm):
            yield self.arrange(rng.integers(0, sizes) if sizes.size else [])


def permutation_test(A, B, top_a, top_b, S, tpairs, min_iou, strata, n_perm, seed) -> dict:
    """One-sided p of each TEST_METRICS: is agreement above chance, given where each
    coding's topic blocks fall? Within each stratum (transcript × speaker, segments in
    transcript order) B's rows are rotated, possibly after reversing them, to start at a
    place that keeps B's runs of one code (:func:`run_preserving_starts`); A stays. Each
    theme keeps its count in each stratum and B keeps its runs, so serial dependence
    (topic blocks) in either coding is kept under the null; moving rows one by one (the
    within-transcript permutation this replaces) broke B's blocks and rejected 0.34–0.37
    of independent codings at stay 0.8–0.9. The null assumes B's block sequence is as likely
    rotated to another block boundary, or reversed, as it came: exact for codings that stay
    or start a new block (any length distribution) independently of where they are.
    p = (1 + #{T* ≥ T}) / (1 + n_perm) over n_perm seeded draws, or, when there are at most
    n_perm arrangements, #{T* ≥ T} / (all of them) (exact; the identity among them). A
    shifted statistic that is undefined counts as reaching T (conservative)."""
    strata = np.ascontiguousarray(strata, dtype=np.int64)
    ctx = _Perm(A, B, top_a, top_b, S, tpairs, min_iou)
    observed = np.array(ctx.stats(np.arange(len(A))), dtype=float)
    shifts = _Shifts(B, np.asarray(top_b), strata)
    exact = shifts.total <= n_perm
    perms = shifts.all() if exact else shifts.draws(n_perm, seed)
    hits = np.zeros(len(TEST_METRICS), dtype=np.int64)
    for perm in perms:
        t = np.array(ctx.stats(perm), dtype=float)
        hits += np.isnan(t) | (t >= observed - P_TOL)
    total = shifts.total
    p = hits / total if exact else (1 + hits) / (1 + n_perm)
    out = {
        f"{m}_p": (float(v) if np.isfinite(observed[k]) else math.nan)
        for k, (m, v) in enumerate(zip(TEST_METRICS, p, strict=True))
    }
    out["p_method"] = P_METHOD + ("_exact" if exact else "")
    out["n_permutations"] = int(total if exact else n_perm)
    return out


def partition_scores(C: np.ndarray) -> tuple[float, float]:
    """(AMI, ARI) of two labelings from their contingency table (rows: A's labels, columns:
    B's; counts, zero rows and columns allowed), equal bit for bit to scikit-learn's
    adjusted_mutual_info_score and adjusted_rand_score on the labelings themselves (the same
    arithmetic on the same counts; tests/test_grounding.py checks it): a bootstrap resample is
    a table of weighted counts, without building, validating and re-counting label arrays.
    """
    C = np.asarray(C, dtype=np.int64)
    C = C[C.sum(axis=1) > 0][:, C.sum(axis=0) > 0]
    n_rows, n_cols = C.shape
    if n_rows == n_cols == 1 or n_rows == n_cols == 0:
        ami = 1.0
    elif n_rows == 1 or n_cols == 1:
        ami = 0.0
    else:
        ami = _ami(C)
    return ami, _ari(C)


def _ami(C: np.ndarray) -> float:
    """scikit-learn's adjusted_mutual_info_score (arithmetic mean) on a trimmed table."""
    from sklearn.metrics.cluster._expected_mutual_info_fast import expected_mutual_information

    eps = np.finfo("float64").eps
    mi = _mutual_info(C)
    emi = expected_mutual_information(C, int(C.sum()))
    h_true, h_pred = _entropy(C.sum(axis=1)), _entropy(C.sum(axis=0))
    denominator = np.mean([h_true, h_pred]) - emi
    denominator = min(denominator, -eps) if denominator < 0 else max(denominator, eps)
    numerator = mi - emi
    numerator = min(numerator, -eps) if numerator < 0 else max(numerator, eps)
    return float(numerator / denominator)


def _mutual_info(C: np.ndarray) -> float:
    """scikit-learn's mutual_info_score(contingency=C) step for step, without its input
    validation (most of a permutation's cost)."""
    nzx, nzy = np.nonzero(C)
    nz_val = C[nzx, nzy]
    total = C.sum()
    pi, pj = C.sum(axis=1), C.sum(axis=0)
    if pi.size == 1 or pj.size == 1:
        return 0.0
    log_nm = np.log(nz_val)
    nm = nz_val / total
    outer = pi.take(nzx).astype(np.int64, copy=False) * pj.take(nzy).astype(np.int64, copy=False)
    log_outer = -np.log(outer) + math.log(pi.sum()) + math.log(pj.sum())
    mi = nm * (log_nm - math.log(total)) + nm * log_outer
    mi = np.where(np.abs(mi) < np.finfo(mi.dtype).eps, 0.0, mi)
    return float(np.clip(mi.sum(), 0.0, None))


def _entropy(counts: np.ndarray) -> float:
    """scikit-learn's label entropy from the labels' counts (all > 0)."""
    pi = counts.astype(np.float64)
    if pi.size == 1:
        return 0.0
    pi_sum = np.sum(pi)
    return float(-np.sum((pi / pi_sum) * (np.log(pi) - math.log(pi_sum))))


def _ari(C: np.ndarray) -> float:
    """scikit-learn's adjusted_rand_score: its pair confusion matrix in integers."""
    n = int(C.sum())
    n_c, n_k = C.sum(axis=1), C.sum(axis=0)
    sum_squares = int((C**2).sum())
    tp = sum_squares - n
    fp = int((C @ n_k).sum()) - sum_squares
    fn = int((C.T @ n_c).sum()) - sum_squares
    tn = n**2 - fp - fn - sum_squares
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))
