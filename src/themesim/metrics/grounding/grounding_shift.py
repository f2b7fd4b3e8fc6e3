"""The test of grounded agreement above chance: B's labels rotated within each transcript and
speaker, keeping B's runs of one code (topic blocks), so that serial dependence along a
transcript is kept under the null (docs/grounding.md)."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.stats import rankdata

from themesim.metrics.grounding.grounding_intervals import CI_METRICS
from themesim.metrics.grounding.grounding_stats import (
    alpha_from_table,
    f1_score,
    grounded_hungarian,
    iou_from_counts,
    median_kappa,
    spearman_ranked,
)
from themesim.metrics.grounding.labelings import Labelings
from themesim.metrics.grounding.partition import partition_scores
from themesim.metrics.kappa import kappa_counts_array

# Agreement above chance: each gets `<metric>_p` from the run-preserving cyclic shift test
# (a data coverage is one set's share of the segments, not an agreement of the two).
TEST_METRICS = [m for m in CI_METRICS if not m.startswith("data_coverage_")]
P_METHOD = "run_preserving_cyclic_shift"
# The statistics whose p is printed: those whose test held its level (type-I error ≤ 0.05 +
# 2 Monte Carlo se) on every serial null of the validation suite, the real-talk nulls among
# them (validate/grounding.py; docs/grounding.md). The others' p is measured by the suite
# (withhold=False) but printed as NaN: read those statistics as descriptions.
PRINTED_P: tuple[str, ...] = ()
P_TOL = 1e-12  # a permuted statistic this close below the observed one counts as reaching it


class _Perm:
    """What every permuted statistic of one comparison shares: B's rows move, A's
    and both sets' label counts stay."""

    def __init__(self, lab: Labelings):
        A, B, S, tpairs = lab.A, lab.B, lab.S, lab.tpairs
        # Counts as float64 products (BLAS): exact for whole numbers below 2**53, and the
        # integer matrix product, which has no BLAS, took most of a draw at 16,000 segments.
        self.Af, self.Bf = A.astype(np.float64), B.astype(np.float64)
        self.n_a = A.astype(np.int64).sum(axis=0)
        self.n_b = B.astype(np.int64).sum(axis=0)
        self.top_a, self.top_b = lab.top_a, lab.top_b
        self.shape = (A.shape[1], B.shape[1])
        self.n, self.min_iou = len(A), lab.min_iou
        self.text = tpairs is not None
        self.tpairs = tpairs or []
        self.ti = np.array([i for i, _ in self.tpairs], dtype=np.int64)
        self.tj = np.array([j for _, j in self.tpairs], dtype=np.int64)
        s = S.ravel()
        self.rank_s = rankdata(s) if self.text and s.size >= 3 and np.ptp(s) > 0 else None

    def stats(self, perm: np.ndarray) -> list[float]:
        """TEST_METRICS with B's segment i labelled as B's segment perm[i] (perm may repeat
        segments: B's counts are then taken afresh)."""
        n_a, n_b = self.shape
        Bp = self.Bf[perm]
        # BLAS on float64: exact for whole numbers below 2**53
        both = (self.Af.T @ Bp).astype(np.int64)
        nb = self.n_b if len(perm) == len(np.unique(perm)) else Bp.sum(axis=0).astype(np.int64)
        iou = iou_from_counts(both, self.n_a, nb)
        tb = self.top_b[perm]
        paired = (self.top_a >= 0) & (tb >= 0)
        C = np.bincount(self.top_a[paired] * n_b + tb[paired], minlength=n_a * n_b)
        C = C.reshape(n_a, n_b)
        ami, ari = partition_scores(C) if C.sum() >= 2 else (math.nan, math.nan)
        g = grounded_hungarian(iou, self.min_iou)
        if self.text:
            kappas = kappa_counts_array(
                both[self.ti, self.tj], self.n_a[self.ti], nb[self.tj], self.n
            )
            med = median_kappa(kappas)
            alpha = alpha_from_table(C, self.tpairs) if C.sum() >= 1 else math.nan
            rho = spearman_ranked(self.rank_s, iou)
        else:
            med = alpha = rho = math.nan
        return [ami, ari, f1_score(len(g), n_a, n_b), med, alpha, rho]


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
        for pick in itertools.product(*(range(len(c)) for c in self.choices)):
            yield self.arrange(pick)

    def draws(self, n_perm: int, seed: int):
        """n_perm arrangements, each stratum's choice drawn uniformly (numpy default_rng)."""
        rng = np.random.default_rng(seed)
        sizes = np.array([len(c) for c in self.choices], dtype=np.int64)
        for _ in range(n_perm):
            yield self.arrange(rng.integers(0, sizes) if sizes.size else [])


class _BlockCodes:
    """B's runs (run_keys) kept in place, their codes permuted within each stratum: the
    segments of run r take B's rows of run π(r), position by position (its last row
    repeated where run π(r) is shorter). Keeps where B's blocks begin and end, so blocks that
    share their boundaries with A's (the interviewer's topic changes) stay aligned."""

    def __init__(self, top_b: np.ndarray, strata: np.ndarray):
        key = run_keys(top_b, strata)
        self.n = len(top_b)
        self.runs = []
        for rows in _stratum_rows(strata):
            k = key[rows]
            runs = np.split(rows, np.flatnonzero(k[1:] != k[:-1]) + 1)
            if len(runs) > 1:
                self.runs.append(runs)

    def draws(self, n_perm: int, seed: int):
        rng = np.random.default_rng(seed)
        for _ in range(n_perm):
            idx = np.arange(self.n)
            for runs in self.runs:
                for r, src in zip(runs, rng.permutation(len(runs)), strict=True):
                    s = runs[src]
                    idx[r] = s[np.minimum(np.arange(len(r)), len(s) - 1)]
            yield idx


def block_code_test(lab: Labelings, strata, n_perm: int, seed: int) -> dict:
    """One-sided p of each TEST_METRICS under the block-code null (:class:`_BlockCodes`):
    p = (1 + #{T* ≥ T}) / (1 + n_perm); an undefined T* counts as reaching T."""
    strata = np.ascontiguousarray(strata, dtype=np.int64)
    ctx = _Perm(lab)
    observed = np.array(ctx.stats(np.arange(len(lab.A))), dtype=float)
    hits = _hits(ctx, observed, _BlockCodes(np.asarray(lab.top_b), strata).draws(n_perm, seed))
    return _p_columns(observed, (1 + hits) / (1 + n_perm))


def _hits(ctx: _Perm, observed: np.ndarray, perms) -> np.ndarray:
    """Per TEST_METRICS, how many of the arrangements `perms` reach the observed statistic
    (an undefined one counts as reaching it)."""
    hits = np.zeros(len(TEST_METRICS), dtype=np.int64)
    for perm in perms:
        t = np.array(ctx.stats(perm), dtype=float)
        hits += np.isnan(t) | (t >= observed - P_TOL)
    return hits


def _p_columns(observed: np.ndarray, p: np.ndarray) -> dict:
    """`<metric>_p` of each TEST_METRICS; NaN where the observed statistic is undefined."""
    return {
        f"{m}_p": (float(v) if np.isfinite(observed[k]) else math.nan)
        for k, (m, v) in enumerate(zip(TEST_METRICS, p, strict=True))
    }


def untested_p() -> dict:
    """A study's row when no statistic's p is printed (PRINTED_P empty): the shift test is
    not drawn at all (at an interview study's size it was most of the grounding job's time);
    its columns stay, NaN, and p_method says why."""
    out: dict = {f"{m}_p": math.nan for m in TEST_METRICS}
    out["p_method"] = (
        f"{P_METHOD}; p given for: none (no statistic held its level on every serial null), "
        "not drawn"
    )
    out["n_permutations"] = 0
    return out


def withheld_p(row: dict) -> dict:
    """The row's `<metric>_p` set to NaN for the statistics not in PRINTED_P, and p_method
    saying which p are given."""
    out = {f"{m}_p": math.nan for m in TEST_METRICS if m not in PRINTED_P}
    given = ", ".join(PRINTED_P) if PRINTED_P else "none"
    out["p_method"] = f"{row['p_method']}; p given for: {given} (level held on every serial null)"
    return out


def permutation_test(lab: Labelings, strata, n_perm: int, seed: int) -> dict:
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
    ctx = _Perm(lab)
    observed = np.array(ctx.stats(np.arange(len(lab.A))), dtype=float)
    shifts = _Shifts(lab.B, np.asarray(lab.top_b), strata)
    exact = shifts.total <= n_perm
    hits = _hits(ctx, observed, shifts.all() if exact else shifts.draws(n_perm, seed))
    total = shifts.total
    out = _p_columns(observed, hits / total if exact else (1 + hits) / (1 + n_perm))
    out["p_method"] = P_METHOD + ("_exact" if exact else "")
    out["n_permutations"] = int(total if exact else n_perm)
    return out
