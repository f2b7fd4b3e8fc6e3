"""Validation area `intercoder`: do the transcript-level jackknife intervals of the coder's
agreement with a human coding (coder_agreement.csv, `themesim agree`) cover the true value?

Design: g transcripts with 5 + Poisson(25) segments each, K = 10 codes with prevalence 0.04 to
0.16; the human applies code k to a segment with its prevalence, and the coder, in transcript
t, applies it to a human-coded segment with probability sens_t ~ Beta(6, 4) and to another
with probability fpr_t ~ Beta(1, 24) — coders that are better on some interviews than others,
so segments of one transcript are not independent. True values: Cohen's κ and Krippendorff's
α of the expected 2×2 tables (pooled over codes; per code for the median), which the pooled
estimates converge to as transcripts grow.

Agreement across codebooks (cu_alpha_codebooks, metrics/agreement/codebooks.py) on nulls: a human
and an LLM code the same segments independently, each with its own codebook (6 and 8 codes); codes
have random similarities (uniform, or max(0, cos) of random vectors, every pair of codes). The
test "agreement above 0" (the 90 % jackknife interval's lower limit above 0, one-sided 0.05)
has its type-I error measured there, and its power where the LLM gives the human's code's twin
(its vector plus noise) to a quarter of the segments both coded.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from themesim.metrics.agreement.codebooks import codebook_alpha_interval
from themesim.metrics.agreement.intercoder import (
    alpha_counts,
    kappa_counts,
    overall_table,
    unit_counts,
)
from themesim.metrics.agreement.unitizing import Coincidences
from themesim.validate.core import Scope, check_grid, rng_for, row, summary_frame

AREA = "intercoder"
K = 10
PREVALENCE = np.linspace(0.04, 0.16, K)
SENS, FPR = (6.0, 4.0), (1.0, 24.0)  # Beta parameters of the coder's per-transcript rates
QUANTITIES = ("pooled_kappa", "pooled_alpha", "median_kappa")
GRID = {"small": {"groups": (6, 12), "draws": 100}, "full": {"groups": (6, 12, 24), "draws": 1000}}


def true_values() -> dict[str, float]:
    """κ and α of the expected tables: per code, E[both] ∝ p E[sens], E[only human] ∝
    p (1 − E[sens]), E[only coder] ∝ (1 − p) E[fpr], E[neither] ∝ (1 − p)(1 − E[fpr])."""
    sens, fpr = SENS[0] / sum(SENS), FPR[0] / sum(FPR)
    p = PREVALENCE
    cells = [p * sens, p * (1 - sens), (1 - p) * fpr, (1 - p) * (1 - fpr)]
    pooled = [c.sum() for c in cells]
    big = 1e9  # α has an (n − 1)/n factor: the limit of large tables
    return {
        "pooled_kappa": float(kappa_counts(*pooled)),
        "pooled_alpha": float(alpha_counts(*[big * c for c in pooled])),
        "median_kappa": float(np.median(kappa_counts(*cells))),
    }


def draw(rng: np.random.Generator, groups: int):
    """(human, coder, transcript per segment) of one simulated study."""
    A, B, g = [], [], []
    for t in range(groups):
        n = 5 + int(rng.poisson(25))
        sens, fpr = rng.beta(*SENS), rng.beta(*FPR)
        a = rng.random((n, K)) < PREVALENCE[None, :]
        u = rng.random((n, K))
        A.append(a)
        B.append(np.where(a, u < sens, u < fpr))
        g += [f"t{t}"] * n
    return np.vstack(A), np.vstack(B), g


# ---------------------------------------------------------------- agreement across codebooks

CB_K = (6, 8)  # codes of the human's and the LLM's codebooks
CB_DIM = 8  # dimensions of the codes' random vectors
CB_CODED = 0.7  # share of segments each coder codes
CB_LEVEL = 0.90  # two-sided level whose lower limit gives the one-sided 0.05 test
# design: (similarity, share the LLM agrees, required). Similarity: "uniform" draws s ~ U(0, 1)
# for every pair of codes; "cosine" is max(0, cos) of random vectors, "related" the same with
# the LLM's codes twins of the human's; "across only" is uniform across the codebooks with the
# pairs within each left at 0 (a similarity file that gives only the cross pairs).
CB_DESIGNS = {
    "unrelated codebooks, uniform s": ("uniform", 0.0, True),
    "unrelated codebooks, cosine s": ("cosine", 0.0, True),
    "related codebooks, cosine s": ("related", 0.0, True),
    "related codebooks, LLM agrees on a quarter": ("related", 0.25, True),
    "uniform s across codebooks only (stress)": ("across only", 0.0, False),
}


def codebook_similarity(rng, shape: str) -> np.ndarray:
    """s over the union of both codebooks (the human's codes first) of one CB_DESIGNS shape."""
    ka, kb = CB_K
    if shape in ("uniform", "across only"):
        s = np.triu(rng.random((ka + kb, ka + kb)), 1)
        s = s + s.T
        if shape == "across only":
            s[:ka, :ka] = s[ka:, ka:] = 0.0
    else:
        a = rng.normal(size=(ka, CB_DIM))
        b = rng.normal(size=(kb, CB_DIM))
        if shape == "related":  # LLM code j: human code j mod K_A plus noise
            a /= np.linalg.norm(a, axis=1, keepdims=True)
            b = a[np.arange(kb) % ka] + 0.4 * b / np.sqrt(CB_DIM)
        v = np.vstack([a, b])
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        s = np.clip(v @ v.T, 0.0, 1.0)
    np.fill_diagonal(s, 1.0)
    return s


def codebook_draw(rng, groups: int, agree: float) -> dict:
    """{transcript: Coincidences} of two independent codings (unless `agree`: the LLM gives the
    twin of the human's code to that share of the segments both code)."""
    ka, kb = CB_K
    wa, wb = np.linspace(1, 3, ka), np.linspace(1, 3, kb)
    wa, wb = wa / wa.sum(), wb / wb.sum()
    out = {}
    for t in range(groups):
        n = 5 + int(rng.poisson(25))
        cuts = np.r_[0, np.cumsum(rng.integers(20, 200, n))]
        per = [[[] for _ in range(ka + kb)] for _ in range(2)]
        for i in range(n):
            a = rng.choice(ka, p=wa) if rng.random() < CB_CODED else None
            b = ka + rng.choice(kb, p=wb) if rng.random() < CB_CODED else None
            if a is not None and b is not None and rng.random() < agree:
                b = ka + a  # LLM code a is the twin of human code a
            for k, code in ((0, a), (1, b)):
                if code is not None:
                    per[k][code].append((cuts[i], cuts[i + 1]))
        coders = [[np.array(x, dtype=np.int64).reshape(-1, 2) for x in c] for c in per]
        out[f"t{t}"] = Coincidences([(int(cuts[-1]), coders)], ka + kb)
    return out


def codebook_run(grid: str, seed: int):
    """(detail, summary rows) of agreement across codebooks on its designs."""
    spec = GRID[grid]
    detail, rows = [], []
    for name, (shape, agree, required) in CB_DESIGNS.items():
        for groups in spec["groups"]:
            design = f"{name}, {groups} transcripts"
            rng = rng_for(seed, AREA, "codebooks", design)
            est, lows, highs = [], [], []
            for d in range(spec["draws"]):
                s = codebook_similarity(rng, shape)
                e, lo, hi = codebook_alpha_interval(codebook_draw(rng, groups, agree), s, CB_LEVEL)
                est.append(e)
                lows.append(lo)
                highs.append(hi)
                detail.append({"design": design, "draw": d, "quantity": "cu_alpha_codebooks",
                               "estimate": e, "ci_low": lo, "ci_high": hi,
                               "rejected": bool(lo > 0)})  # fmt: skip
            n = len(est)
            share = float(np.mean(np.asarray(lows) > 0))
            test = "90 % jackknife lower limit > 0"
            prop, nominal = ("power", np.nan) if agree > 0 else ("type1_error", 0.05)
            at = Scope(AREA, design, required=required)
            rows.append(row(at, "cu_alpha_codebooks", test, prop, share, n,
                            nominal=nominal))  # fmt: skip
            rows.append(row(at, "cu_alpha_codebooks", "estimate", "mean_estimate",
                            float(np.nanmean(est)), n,
                            mc_se=float(np.nanstd(est) / np.sqrt(n))))  # fmt: skip
    return detail, rows


def run(grid: str, seed: int):
    check_grid(grid)
    spec = GRID[grid]
    truth = true_values()
    detail, rows = [], []
    for groups in spec["groups"]:
        design = f"{groups} transcripts"
        rng = rng_for(seed, AREA, design)
        hits = {q: [] for q in QUANTITIES}
        widths = {q: [] for q in QUANTITIES}
        for d in range(spec["draws"]):
            A, B, g = draw(rng, groups)
            over = overall_table(unit_counts(A, B, g, [f"c{k}" for k in range(K)]))
            o = over.set_index("scope").loc["all"]
            for q in QUANTITIES:
                lo, hi = o[f"{q}_ci_low"], o[f"{q}_ci_high"]
                hit = bool(lo <= truth[q] <= hi) if np.isfinite(lo) else False
                hits[q].append(hit)
                widths[q].append(hi - lo)
                detail.append(
                    {
                        "design": design,
                        "draw": d,
                        "quantity": q,
                        "estimate": o[q],
                        "ci_low": lo,
                        "ci_high": hi,
                        "truth": truth[q],
                        "covered": hit,
                    }
                )
        for q in QUANTITIES:
            n = len(hits[q])
            rows.append(
                row(
                    Scope(AREA, design),
                    q,
                    "jackknife over transcripts",
                    "coverage",
                    float(np.mean(hits[q])),
                    n,
                    nominal=0.95,
                )  # fmt: skip
            )
            rows.append(
                row(
                    Scope(AREA, design),
                    q,
                    "jackknife over transcripts",
                    "mean_width",
                    float(np.nanmean(widths[q])),
                    n,
                    mc_se=float(np.nanstd(widths[q]) / np.sqrt(n)),
                )  # fmt: skip
            )
    cb_detail, cb_rows = codebook_run(grid, seed)
    return pd.DataFrame(detail + cb_detail), summary_frame(rows + cb_rows)
