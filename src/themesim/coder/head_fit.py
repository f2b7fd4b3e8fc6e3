"""Fitting the trained coder's head (head.py) with scikit-learn's logistic regression: only
when the coder is trained (`themesim train-coder`); the labels jobs apply a fitted head with
numpy alone and never import scikit-learn."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from themesim.coder.head import Head, features, outcome


def fit_head(scores: list[np.ndarray], truths: list[np.ndarray]) -> Head:
    """The head fitted on themes × passages score matrices and their passages × themes
    truths."""
    X, y = [], []
    for S, T in zip(scores, truths, strict=True):
        best, x = features(S)
        X.append(x)
        y.append(outcome(best, T))
    X, y = np.vstack(X), np.concatenate(y)
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    lr = LogisticRegression(max_iter=2000).fit((X - mu) / sd, y)
    return Head(mu, sd, lr.coef_, lr.intercept_, lr.classes_)
