"""The coder's figures on labelled (passage, theme) data (argkp.Group): per-key-point Cohen's
κ, accuracy against the majority baseline, "none" precision and recall, and the KPA shared
task's mAP (strict and relaxed), per topic and overall (docs/grounding.md).

answers: per group each argument's key point index or NONE (-1). confidence: per group each
argument's score of its best key point (what the KPA mAP ranks by).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.metrics import average_precision_score

from themesim.coder.argkp import NONE, Group


def kp_kappas(groups: list[Group], answers) -> list[np.ndarray]:
    """Per group one Cohen's κ per key point over its arguments (the key point said against
    its label 1; unlabelled pairs count as not the key point), from the 2×2 counts as
    scikit-learn's cohen_kappa_score computes it; NaN where undefined (both constant)."""
    out = []
    for g, ans in zip(groups, answers, strict=True):
        n, nk = g.truth.shape
        yn = g.truth.sum(axis=0)
        on = ans >= 0
        p = np.bincount(ans[on], minlength=nk)
        tp = np.bincount(ans[on], weights=g.truth[np.nonzero(on)[0], ans[on]], minlength=nk)
        po = (n - p - yn + 2 * tp) / n
        pe = (p * yn + (n - p) * (n - yn)) / n**2
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where(pe < 1, (po - pe) / (1 - pe), np.nan))
    return out


def correct(groups: list[Group], answers) -> list[np.ndarray]:
    """Per group whether each argument's answer is one of its true answers."""
    out = []
    for g, ans in zip(groups, answers, strict=True):
        hit = np.where(ans == NONE, g.none, g.truth[np.arange(len(ans)), np.maximum(ans, 0)])
        out.append(hit)
    return out


def majority(groups: list[Group]) -> list[np.ndarray]:
    """Per group always its most common true answer (none first, then key points in order):
    an oracle baseline, it reads the truth it is scored on."""
    out = []
    for g in groups:
        counts = [int(g.none.sum()), *g.truth.sum(axis=0)]
        out.append(np.full(len(g.truth), int(np.argmax(counts)) - 1))
    return out


def average_precision(g: Group, best: np.ndarray, conf: np.ndarray, relaxed: bool) -> float:
    """The KPA 2021 track 1 AP of one topic and stance: each argument's best key point, the
    top 50 % of arguments by confidence (stable order), a pair labelled 1 positive, an
    unlabelled pair negative (strict) or positive (relaxed); 0 without a positive."""
    top = int(len(best) * 0.5)
    order = np.argsort(-conf, kind="stable")[:top]
    rows = np.arange(len(best))[order]
    k = best[order]
    y = np.where(g.known[rows, k], g.truth[rows, k], relaxed).astype(int)
    if top == 0 or y.sum() == 0:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(average_precision_score(y, conf[order]))


def figures(groups: list[Group], answers, best, conf) -> dict:
    """The overall figures (see the module docstring); best: per group each argument's best
    key point whatever the abstention (for mAP)."""
    ks = np.concatenate(kp_kappas(groups, answers))
    hit = np.concatenate(correct(groups, answers))
    base = np.concatenate(correct(groups, majority(groups)))
    said = np.concatenate([a == NONE for a in answers])
    true = np.concatenate([g.none for g in groups])
    ap = {
        r: [average_precision(g, b, c, r) for g, b, c in zip(groups, best, conf, strict=True)]
        for r in (False, True)
    }
    return {
        "arguments": int(hit.size),
        "key_points": int(ks.size),
        "kappa_median": float(np.nanmedian(ks)) if np.isfinite(ks).any() else float("nan"),
        "kappa_undefined": int(np.isnan(ks).sum()),
        "accuracy": float(hit.mean()),
        "majority": float(base.mean()),
        "none_precision": float((said & true).sum() / said.sum()) if said.any() else float("nan"),
        "none_recall": float((said & true).sum() / true.sum()) if true.any() else float("nan"),
        "said_none": int(said.sum()),
        "true_none": int(true.sum()),
        "map_strict": float(np.mean(ap[False])),
        "map_relaxed": float(np.mean(ap[True])),
    }


def by_topic(groups: list[Group], answers, best, conf) -> dict[str, dict]:
    """figures() of each topic (both stances)."""
    out = {}
    for t in sorted({g.topic for g in groups}):
        idx = [i for i, g in enumerate(groups) if g.topic == t]
        out[t] = figures(*([xs[i] for i in idx] for xs in (groups, answers, best, conf)))
    return out


def bootstrap(groups: list[Group], answers, *, boot: int, seed: int) -> dict:
    """95 % percentile intervals of the median per-key-point κ and the accuracy from a
    bootstrap over topics (both stances of a topic together)."""
    ks = kp_kappas(groups, answers)
    hit = correct(groups, answers)
    names = sorted({g.topic for g in groups})
    by = {t: [i for i, g in enumerate(groups) if g.topic == t] for t in names}
    rng = np.random.default_rng(seed)
    bk, ba = [], []
    for _ in range(boot):
        pick = [i for t in rng.choice(names, len(names)) for i in by[t]]
        bk.append(np.nanmedian(np.concatenate([ks[i] for i in pick])))
        ba.append(sum(hit[i].sum() for i in pick) / sum(len(hit[i]) for i in pick))
    q = lambda v: tuple(float(x) for x in np.percentile(v, [2.5, 97.5]))  # noqa: E731
    return {"kappa_ci": q(bk), "accuracy_ci": q(ba), "boot_kappa": np.array(bk)}
