"""Validation area `intercoder`: do the transcript-level jackknife intervals of the coder's
agreement with a human coding (coder_agreement.csv, `themesim agree`) cover the true value?

Design: g transcripts with 5 + Poisson(25) segments each, K = 10 codes with prevalence 0.04 to
0.16; the human applies code k to a segment with its prevalence, and the coder, in transcript
t, applies it to a human-coded segment with probability sens_t ~ Beta(6, 4) and to another
with probability fpr_t ~ Beta(1, 24) — coders that are better on some interviews than others,
so segments of one transcript are not independent. True values: Cohen's κ and Krippendorff's
α of the expected 2×2 tables (pooled over codes; per code for the median), which the pooled
estimates converge to as transcripts grow.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from themesim.metrics.intercoder import (
    alpha_counts,
    kappa_counts,
    overall_table,
    unit_counts,
)
from themesim.validate.core import check_grid, rng_for, row, summary_frame

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
                    AREA,
                    design,
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
                    AREA,
                    design,
                    q,
                    "jackknife over transcripts",
                    "mean_width",
                    float(np.nanmean(widths[q])),
                    n,
                    mc_se=float(np.nanstd(widths[q]) / np.sqrt(n)),
                )  # fmt: skip
            )
    return pd.DataFrame(detail), summary_frame(rows)
