"""Nested validation of a trained coder over topics: a topic is never in its own training fold.

The topics are dealt into k folds (argkp.topic_folds). For each fold the encoder is trained on
the other folds' topics and scores this fold's; each held-out topic's "none" head is then
fitted on the scores of the fold's other topics (leave one topic out inside the fold: they too
are unseen by that encoder), so neither the encoder nor the head of a topic ever read its
labels. The pooled held-out answers give the figures of kpa.py.
"""

from __future__ import annotations

import time

import numpy as np

from themesim.coder import kpa
from themesim.coder.argkp import Group, topic_folds
from themesim.coder.head import features
from themesim.coder.head_fit import fit_head


def heads_within(groups: list[Group], scores: list[np.ndarray]):
    """Held-out answers, best themes and confidences (P(right)) of groups whose scores come
    from an encoder that saw none of their topics: each topic's head fitted on the others."""
    answers, best, conf = [None] * len(groups), [None] * len(groups), [None] * len(groups)
    names = sorted({g.topic for g in groups})
    for t in names:
        tr = [i for i, g in enumerate(groups) if g.topic != t]
        head = fit_head([scores[i] for i in tr], [groups[i].truth for i in tr])
        for i, g in enumerate(groups):
            if g.topic == t:
                answers[i], best[i], conf[i] = head.decide(scores[i])
    return answers, best, conf


def held_out_scores(groups, folds, score_fold, log=print) -> list[np.ndarray]:
    """Per group its scores from the encoder trained without its fold:
    score_fold(train_groups, test_groups) -> list of score matrices."""
    scores = [None] * len(groups)
    for f, fold in enumerate(folds):
        test = [i for i, g in enumerate(groups) if g.topic in fold]
        train = [g for g in groups if g.topic not in fold]
        t0 = time.time()
        out = score_fold(train, [groups[i] for i in test])
        for i, S in zip(test, out, strict=True):
            scores[i] = S
        log(f"fold {f + 1}/{len(folds)} ({len(fold)} topics held out): {time.time() - t0:.0f} s")
    return scores


def evaluate(groups, scores) -> dict:
    """The figures of held-out scores with the cross-fitted head; also mAP ranked by the raw
    score (the field's figure) beside mAP ranked by the head's P(right)."""
    answers, best, conf = heads_within(groups, scores)
    out = kpa.figures(groups, answers, best, conf)
    raw_best = [features(S)[0] for S in scores]
    raw_conf = [S.max(axis=0) for S in scores]
    raw = kpa.figures(groups, answers, raw_best, raw_conf)
    out["map_strict_score"], out["map_relaxed_score"] = raw["map_strict"], raw["map_relaxed"]
    out["choice_right"] = float(
        np.mean(
            np.concatenate(
                [g.truth[np.arange(len(b)), b][~g.none] for g, b in zip(groups, best, strict=True)]
            )
        )
    )
    return out, answers, best, conf


def folds_of(groups: list[Group], k: int):
    return topic_folds(groups, k)
