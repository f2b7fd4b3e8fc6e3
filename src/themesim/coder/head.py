"""The trained coder's "none": an abstention learned from labels, not a fixed threshold.

Per passage the coder's choice is its best theme (highest score). A multinomial logistic
regression reads features of that choice and gives three probabilities: the choice is
right, the passage has no theme ("none"), or neither (another theme is right). The coder
says none when P(none) ≥ P(right), which maximises the expected accuracy. Fitted on scores
of passages whose encoder never saw their topic (cross-fitted), so that it is calibrated
for new data, not for the encoder's own training data. Fitted with scikit-learn in
head_fit.py; applied here with numpy, so the labels jobs never import scikit-learn.
"""

from __future__ import annotations

import numpy as np

from themesim.coder.argkp import NONE

FEATURES = ("top", "centred", "z", "gap", "mean", "log_themes")
RIGHT, NOTHING, OTHER = 0, 1, 2


def features(S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(best theme per passage, passages × FEATURES) from a themes × passages score matrix:
    the best score, it minus the theme's mean over the passages, that over the theme's
    standard deviation, its gap to the second best (0 with one theme), the passage's mean
    score over the themes, log of the number of themes."""
    S = np.asarray(S, dtype=np.float64)
    k, n = S.shape
    best = np.argmax(S, axis=0)  # ties: the theme listed first
    cols = np.arange(n)
    top = S[best, cols]
    mean_t = S.mean(axis=1)
    sd_t = S.std(axis=1)
    cen = top - mean_t[best]
    z = cen / np.where(sd_t[best] > 0, sd_t[best], 1.0)
    second = np.sort(S, axis=0)[-2] if k > 1 else top
    X = np.c_[top, cen, z, top - second, S.mean(axis=0), np.full(n, np.log(k))]
    return best, X


def outcome(best: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """RIGHT, NOTHING or OTHER per passage (truth: passages × themes booleans)."""
    right = truth[np.arange(len(best)), best]
    return np.where(right, RIGHT, np.where(truth.any(axis=1), OTHER, NOTHING))


class Head:
    """Standardised features → multinomial logistic regression."""

    def __init__(self, mu, sd, coef, intercept, classes):
        self.mu, self.sd = np.asarray(mu, float), np.asarray(sd, float)
        self.coef, self.intercept = np.asarray(coef, float), np.asarray(intercept, float)
        self.classes = [int(c) for c in classes]

    def proba(self, X: np.ndarray) -> np.ndarray:
        """passages × (RIGHT, NOTHING, OTHER) probabilities (0 for a class never seen)."""
        Z = (X - self.mu) / self.sd
        logits = Z @ self.coef.T + self.intercept
        if len(self.classes) == 2:  # scikit-learn's binary form: one column
            logits = np.c_[-logits[:, 0] / 2, logits[:, 0] / 2]
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        out = np.zeros((len(X), 3))
        out[:, self.classes] = p
        return out

    def decide(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(answer per passage: best theme or NONE, best theme, P(right))."""
        best, X = features(S)
        p = self.proba(X)
        return np.where(p[:, NOTHING] >= p[:, RIGHT], NONE, best), best, p[:, RIGHT]

    def to_dict(self) -> dict:
        return {
            "features": list(FEATURES),
            "mean": self.mu.tolist(),
            "sd": self.sd.tolist(),
            "coef": self.coef.tolist(),
            "intercept": self.intercept.tolist(),
            "classes": self.classes,
            "class_names": ["right", "none", "other"],
        }

    @classmethod
    def from_dict(cls, d: dict) -> Head:
        return cls(d["mean"], d["sd"], d["coef"], d["intercept"], d["classes"])
