"""Labelled (passage, theme) data in the ArgKP layout, the trained coder's training data.

A folder with `arguments_<split>.csv` (arg_id, argument, topic, stance),
`key_points_<split>.csv` (key_point_id, key_point, topic, stance) and `labels_<split>.csv`
(arg_id, key_point_id, label 0/1), as IBM's ArgKP 2021 ships it. Per topic and stance the key
points are one theme set and the arguments its passages; an argument with no label-1 pair is
coded "none"; a pair without a label is unknown, not 0. The data is read in place.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from themesim.errors import InputError

FILES = {
    "arguments": ("arg_id", "argument", "topic", "stance"),
    "key_points": ("key_point_id", "key_point", "topic", "stance"),
    "labels": ("arg_id", "key_point_id", "label"),
}
NONE = -1


@dataclass
class Group:
    """One topic and stance: its key points (themes) and arguments (passages)."""

    topic: str
    stance: int
    kp_ids: list[str]
    kp_texts: list[str]
    arg_ids: list[str]
    arg_texts: list[str]
    truth: np.ndarray  # arguments × key points: label 1
    known: np.ndarray  # arguments × key points: labelled (0 or 1)

    @property
    def none(self) -> np.ndarray:
        """Arguments whose truth is "none" (no label-1 key point)."""
        return ~self.truth.any(axis=1)


def paths(data, split: str = "train") -> dict[str, Path]:
    return {name: Path(data) / f"{name}_{split}.csv" for name in FILES}


def file_hashes(data, split: str = "train") -> dict[str, str]:
    """sha256 of each data file, for the model card."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths(data, split).values()}


def _read(path: Path, columns) -> pd.DataFrame:
    if not path.is_file():
        raise InputError(
            str(path), "not found", "Give --data a folder in the ArgKP layout (docs/grounding.md)."
        )
    df = pd.read_csv(path, keep_default_na=False)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(
            str(path), f"lacks column(s) {', '.join(missing)}", f"Give {', '.join(columns)}."
        )
    return df


def load(data, split: str = "train") -> list[Group]:
    """The groups (topic, stance) of an ArgKP-layout folder, sorted by topic then stance."""
    p = paths(data, split)
    args = _read(p["arguments"], FILES["arguments"])
    kps = _read(p["key_points"], FILES["key_points"])
    lab = _read(p["labels"], FILES["labels"])
    bad = lab.index[~lab["label"].astype(str).isin(["0", "1"])]
    if len(bad):
        raise InputError(
            f"{p['labels']} row {int(bad[0]) + 2}",
            f"label {lab['label'].iat[bad[0]]!r} is not 0 or 1",
            "Labels are 0 (does not express the key point) or 1 (does).",
        )
    label = {
        (a, k): int(v)
        for a, k, v in lab[["arg_id", "key_point_id", "label"]].itertuples(index=False)
    }
    groups = []
    for (topic, stance), kp in kps.groupby(["topic", "stance"], sort=True):
        ar = args[(args["topic"] == topic) & (args["stance"] == stance)]
        if ar.empty:
            continue
        kp_ids = kp["key_point_id"].astype(str).tolist()
        arg_ids = ar["arg_id"].astype(str).tolist()
        truth = np.zeros((len(arg_ids), len(kp_ids)), dtype=bool)
        known = np.zeros_like(truth)
        for i, a in enumerate(arg_ids):
            for j, k in enumerate(kp_ids):
                v = label.get((a, k))
                known[i, j] = v is not None
                truth[i, j] = v == 1
        groups.append(
            Group(
                str(topic),
                int(stance),
                kp_ids,
                kp["key_point"].astype(str).tolist(),
                arg_ids,
                ar["argument"].astype(str).tolist(),
                truth,
                known,
            )
        )
    if not groups:
        raise InputError(str(p["key_points"]), "no topic has arguments", "Check the files.")
    return groups


def topics(groups: list[Group]) -> list[str]:
    return sorted({g.topic for g in groups})


def topic_folds(groups: list[Group], k: int) -> list[list[str]]:
    """The sorted topics dealt into k folds in turn (fold i: topics i, i + k, ...)."""
    t = topics(groups)
    return [t[i::k] for i in range(k)]
