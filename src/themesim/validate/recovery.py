"""Recovery of the demo's known mapping per method, scale and threshold.

The demo's human themes have known counterparts in llm_paraphrase (one each), llm_partial
(three of five) and llm_granular (one to three each) (data/demo/README.md). For each real
method and each scale a threshold can be set on, the Hungarian pairs kept at a threshold are
held against that mapping:

- raw: the method's similarity; angular: 1 − arccos(S)/π, at the angular image of each raw
  threshold (the same decisions: the map is monotone); z: the within-set z scale
  (metrics/sets/scales.py); calibrated: P(match) from the demo's rated pairs (isotonic,
  metrics/calibration.py); null: a Hungarian pair is kept when its A theme's null q-value
  (word-salad pool, metrics/sets/nulls.py) is at most the level, whatever the similarity.

pair_precision = kept pairs that are mapped / kept pairs; pair_recall = human themes with a
counterpart whose kept pair is mapped / human themes with a counterpart; pair_f1 their
harmonic mean (0 when nothing is kept).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

from themesim.embed.texts import word_salad_pool
from themesim.kinds import DEFAULT_METHODS
from themesim.metrics.calibration import isotonic_fit, read_rated_pairs
from themesim.metrics.isotonic import map_calibrated
from themesim.metrics.sets.distinctiveness import angular_sim
from themesim.metrics.sets.nulls import null_table
from themesim.metrics.sets.scales import z_scale
from themesim.steps.similarity import similarity_for
from themesim.validate import demo
from themesim.validate.core import Scope, check_grid, row, summary_frame

AREA = "recovery"
METHODS = {"small": ["minilm", "tfidf"], "full": ["minilm", "mpnet", "tfidf"]}
COMPARISONS = ["llm_paraphrase", "llm_partial", "llm_granular"]
RAW_GRID = np.round(np.arange(0.0, 1.0001, 0.02), 2)
Z_GRID = np.round(np.arange(-1.0, 5.0001, 0.25), 2)
P_GRID = np.round(np.arange(0.0, 1.0001, 0.05), 2)
Q_GRID = [0.01, 0.05, 0.1, 0.2]


def pair_recovery(S: np.ndarray, T: np.ndarray, keep: np.ndarray) -> tuple[float, float, float]:
    """(precision, recall, f1) of the Hungarian pairs of S flagged in keep (per A row) against
    the known match matrix T."""
    rows, cols = linear_sum_assignment(S, maximize=True)
    kept = keep[rows, cols]
    right = T[rows, cols] & kept
    n_kept = int(kept.sum())
    has = T.any(axis=1)
    precision = right.sum() / n_kept if n_kept else 0.0
    recall = right.sum() / has.sum() if has.any() else np.nan
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return float(precision), float(recall), float(f1)


def _rated_scores(method: str) -> tuple[np.ndarray, np.ndarray]:
    pairs = read_rated_pairs(demo.DEMO / "rated_pairs.csv")
    a = pd.DataFrame({"text": pairs["text_a"].tolist()})
    b = pd.DataFrame({"text": pairs["text_b"].tolist()})
    S = similarity_for(DEFAULT_METHODS[method], a, b)
    return np.diag(S), pairs["label"].to_numpy(int)


def _null_q(method: str, S: np.ndarray, set_b: str) -> np.ndarray:
    """Each human theme's null q-value against set_b's word-salad pool (200, seed 0)."""
    t = demo.themes()
    a = t[t["set"] == "human"]
    b_texts = t.loc[t["set"] == set_b, "text"].tolist()
    pool, _ = word_salad_pool(b_texts, 200, 0)
    P = similarity_for(DEFAULT_METHODS[method], a, pd.DataFrame({"text": pool}))
    return null_table(S.max(axis=1), P, len(b_texts))["null_q"].to_numpy()


def method_rows(method: str) -> list[dict]:
    full = demo.similarity(method)
    default = float(DEFAULT_METHODS[method]["thresholds"][0])
    scores, labels = _rated_scores(method)
    fit = isotonic_fit(scores, labels)
    out = []
    for set_b in COMPARISONS:
        S = demo.block(full, "human", set_b)
        T = demo.truth(set_b)
        W_a, W_b = demo.block(full, "human", "human"), demo.block(full, set_b, set_b)
        Z, _ = z_scale(S, W_a, W_b)
        q = _null_q(method, S, set_b)
        scales = {
            "raw": (S, RAW_GRID, default),
            "angular": (angular_sim(S), angular_sim(RAW_GRID), float(angular_sim(default))),
            "z": (Z, Z_GRID, 2.0),
            "calibrated": (map_calibrated(S, fit), P_GRID, 0.5),
        }
        for scale, (M, grid, theta0) in scales.items():
            for theta in list(grid) + [theta0]:
                p, r, f = pair_recovery(M, T, M >= theta)
                out.append(_rec(method, set_b, scale, theta, theta == theta0, p, r, f))
        for level in Q_GRID:
            keep = np.repeat((q <= level)[:, None], S.shape[1], axis=1)
            p, r, f = pair_recovery(S, T, keep)
            out.append(_rec(method, set_b, "null", level, level == 0.05, p, r, f))
    return out


def _rec(method, set_b, scale, threshold, is_default, p, r, f) -> dict:
    return {
        "method": method,
        "set_b": set_b,
        "scale": scale,
        "threshold": float(threshold),
        "default": bool(is_default),
        "pair_precision": p,
        "pair_recall": r,
        "pair_f1": f,
    }


def run(grid_name: str, seed: int):
    check_grid(grid_name)
    if demo.missing():
        raise FileNotFoundError(demo.missing())
    detail = pd.DataFrame([r for m in METHODS[grid_name] for r in method_rows(m)])
    detail = detail.drop_duplicates(["method", "set_b", "scale", "threshold"], keep="last")
    rows = []
    for (method, set_b, scale), g in detail.groupby(["method", "set_b", "scale"], sort=False):
        best = g.loc[g["pair_f1"].idxmax()]
        at_default = g[g["default"]]
        design = f"demo human vs {set_b}"
        rows.append(
            row(
                Scope(AREA, design),
                f"pair_f1 ({method})",
                f"{scale}, best threshold {best['threshold']:g}",
                "recovery_f1",
                float(best["pair_f1"]),
                1,
                mc_se=0.0,
            )
        )
        if len(at_default):
            d = at_default.iloc[0]
            rows.append(
                row(
                    Scope(AREA, design),
                    f"pair_f1 ({method})",
                    f"{scale}, default threshold {d['threshold']:g}",
                    "recovery_f1",
                    float(d["pair_f1"]),
                    1,
                    mc_se=0.0,
                )
            )
    return detail.reset_index(drop=True), summary_frame(rows)
