"""The automatic coder's labels from theme and segment vectors (docs/grounding.md, "The coder").

Kinds:

- `similarity`: a theme's prototype is its own text's vector (today's assignment);
- `exemplar`: a theme's prototype is the mean of the vectors of the segments its evidence
  labels (coded segments, located quotes) plus `text_weight` × its text's vector; a theme
  without evidence keeps its text's vector.

Evidence is **cross-fitted by transcript**: the segments of a transcript are scored with
prototypes (and fitted thresholds) made from the other transcripts' evidence only, so a set's
coder labels never copy its own coding of the same passage — the coder codes each transcript
blind, and its agreement with the human coding (coder_agreement.csv) is a held-out figure.

Rules: `top1` gives a segment its best theme when that theme's score reaches the threshold
(the demo's analyst gave 82 of 84 coded segments one theme); best by the score minus the
theme's mean over the segments (`center`, default), so that a theme whose text resembles
every passage does not take them all; `all` every theme that reaches the threshold.
`context` > 0 mixes into each segment's vector its neighbouring turns of the same speaker
(the previous and next segment of that speaker in its transcript), with that weight.
`fit_thresholds` fits a threshold per theme where the set has coded segments (the score that
maximises the theme's κ with them on the other transcripts; themes with fewer than `min_coded`
coded segments keep the method's threshold).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from themesim.coder.settings import CODER_DEFAULTS, rule_of
from themesim.metrics.kappa import kappa_counts

RULES = ("top1", "all")


@dataclass(frozen=True)
class CoderOptions:
    """How the coder of vectors labels a set (the module's docstring): its kind (`coding`:
    similarity or exemplar), `rule`, `context`, `text_weight`, `fit_thresholds`,
    `min_coded` and `center`."""

    coding: str
    rule: str
    context: float = CODER_DEFAULTS["context"]
    text_weight: float = CODER_DEFAULTS["text_weight"]
    fit_thresholds: bool = CODER_DEFAULTS["fit_thresholds"]
    min_coded: int = CODER_DEFAULTS["min_coded"]
    center: bool = CODER_DEFAULTS["center"]

    @classmethod
    def of(cls, coder: dict, coding: str) -> CoderOptions:
        """The options of grounding.coder (`coder`, as coder_settings fills it in) for the
        coder kind `coding`."""
        return cls(
            coding=coding,
            rule=rule_of(coder, coding),
            context=float(coder["context"]),
            text_weight=float(coder["text_weight"]),
            fit_thresholds=bool(coder["fit_thresholds"]),
            min_coded=int(coder["min_coded"]),
            center=bool(coder["center"]),
        )


def unit_rows(V: np.ndarray) -> np.ndarray:
    V = np.asarray(V, dtype=np.float64)
    n = np.linalg.norm(V, axis=1, keepdims=True)
    return V / np.where(n > 0, n, 1)


def context_vectors(V: np.ndarray, segments: pd.DataFrame, weight: float) -> np.ndarray:
    """Each segment's unit vector plus `weight` × those of the previous and next segment of
    the same speaker in its transcript, renormalised (segments in transcript order)."""
    V = unit_rows(V)
    if not weight:
        return V
    out = V.copy()
    keys = list(zip(segments["transcript"], segments["speaker"].astype(str), strict=True))
    runs: dict = {}
    for i, key in enumerate(keys):
        runs.setdefault(key, []).append(i)
    for idx in runs.values():
        for k, i in enumerate(idx):
            for j in (idx[k - 1] if k else None, idx[k + 1] if k + 1 < len(idx) else None):
                if j is not None:
                    out[i] += weight * V[j]
    return unit_rows(out)


def cross_fitted_scores(
    T: np.ndarray,
    V: np.ndarray,
    groups,
    evidence: np.ndarray | None,
    *,
    coding: str,
    text_weight: float = CODER_DEFAULTS["text_weight"],
) -> np.ndarray:
    """Themes × segments scores: the cosine of each segment with its theme prototypes, those
    made from the evidence of the other groups (transcripts) only. evidence: segments ×
    themes booleans (None or all False: every prototype is the theme's text)."""
    T, V = unit_rows(T), unit_rows(V)
    groups = np.asarray(groups, dtype=object)
    if coding == "similarity" or evidence is None or not evidence.any():
        return T @ V.T
    S = np.zeros((len(T), len(V)))
    for g in dict.fromkeys(groups.tolist()):
        test = groups == g
        P = prototypes(T, V, evidence & ~test[:, None], text_weight)
        S[:, test] = P @ V[test].T
    return S


def prototypes(T: np.ndarray, V: np.ndarray, evidence: np.ndarray, text_weight: float):
    """Per theme the unit mean of its evidence segments' vectors plus text_weight × its text
    vector; the text vector alone for a theme without evidence."""
    P = T.copy()
    for k in range(len(T)):
        rows = evidence[:, k]
        if rows.any():
            P[k] = V[rows].mean(axis=0) + text_weight * T[k]
    return unit_rows(P)


def decide(
    S: np.ndarray,
    eligible: np.ndarray,
    rule: str,
    thresholds,
    center: bool = CODER_DEFAULTS["center"],
) -> np.ndarray:
    """Segments × themes labels: per `rule` from the scores S (themes × segments) against the
    threshold(s) (a number, or one per theme and segment: themes × segments). Segments not
    eligible (an excluded speaker) get none.

    top1 with `center`: the best theme is the one whose score lies furthest above its own
    mean over the eligible segments — a theme whose text resembles every passage (a hub)
    would otherwise take most of them; the threshold still applies to the raw score."""
    eligible = np.asarray(eligible, dtype=bool)
    thr = np.broadcast_to(np.asarray(thresholds, dtype=float), S.shape)
    passes = S >= thr
    if rule == "top1":
        R = S
        if center and eligible.any():
            R = S - S[:, eligible].mean(axis=1, keepdims=True)
        best = np.argmax(R, axis=0)  # ties: the theme listed first
        passes = passes & (np.arange(len(S))[:, None] == best[None, :])
    return (passes & eligible[None, :]).T


def fitted_thresholds(
    S: np.ndarray,
    coded: np.ndarray,
    groups,
    eligible: np.ndarray,
    default: float,
    min_coded: int = CODER_DEFAULTS["min_coded"],
) -> np.ndarray:
    """Themes × segments thresholds, cross-fitted: for each group, per theme the score that
    maximises the theme's Cohen's κ with the coded labels over the other groups' eligible
    segments (ties: the lowest such score); `default` for a theme with fewer than min_coded
    coded segments there."""
    groups = np.asarray(groups, dtype=object)
    out = np.full(S.shape, float(default))
    for g in dict.fromkeys(groups.tolist()):
        train = (groups != g) & eligible
        for k in range(len(S)):
            y = coded[train, k]
            if y.sum() < min_coded:
                continue
            s = S[k, train]
            cand = np.unique(s)
            x = s[None, :] >= cand[:, None]
            both = (x & y).sum(axis=1)
            ka = kappa_counts(
                both, x.sum(axis=1) - both, y.sum() - both, len(y) - x.sum(axis=1) - y.sum() + both
            )
            ka = np.where(np.isnan(ka), -np.inf, ka)
            out[k, groups == g] = cand[int(np.argmax(ka))]
    return out


def vector_labels(
    T: np.ndarray,
    V: np.ndarray,
    segments: pd.DataFrame,
    eligible: np.ndarray,
    options: CoderOptions,
    *,
    threshold: float,
    evidence: np.ndarray | None = None,
    coded: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(segments × themes labels, themes × segments scores) of one set.

    T: theme vectors; V: segment vectors (rows of `segments`, in transcript order); evidence:
    the set's evidence labels (coded and quote) as prototypes; coded: its coded labels, for
    fitted thresholds. Both cross-fitted by transcript."""
    o = options
    groups = segments["transcript"].to_numpy()
    W = context_vectors(V, segments, o.context)
    S = cross_fitted_scores(T, W, groups, evidence, coding=o.coding, text_weight=o.text_weight)
    thr = threshold
    if o.fit_thresholds and coded is not None and coded.any():
        thr = fitted_thresholds(
            S, coded, groups, np.asarray(eligible, bool), threshold, o.min_coded
        )
    return decide(S, eligible, o.rule, thr, o.center), S
