"""The demo study's themes and their known mapping (data/demo/README.md, "Ground-truth
mapping"), embedded by the real methods, for the suite's designs on real embeddings."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd

from themesim.io.themes import read_theme_file
from themesim.kinds import DEFAULT_METHODS
from themesim.steps.similarity import similarity_for

DEMO = Path(__file__).resolve().parents[3] / "data" / "demo"

SETS = {
    "human": "human.csv",
    "llm_paraphrase": "llm_paraphrase.yaml",
    "llm_partial": "llm_partial.md",
    "llm_granular": "llm_granular.json",
}

# Reference theme -> its counterparts in each set (data/demo/README.md). llm_partial's
# themes have no ids; the reader numbers them T01-T05 in file order.
MAPPING = {
    "H01": {"llm_paraphrase": ["P02"], "llm_partial": [], "llm_granular": ["G01", "G02"]},
    "H02": {
        "llm_paraphrase": ["P04"],
        "llm_partial": ["T03"],
        "llm_granular": ["G03", "G04", "G05"],
    },
    "H03": {"llm_paraphrase": ["P01"], "llm_partial": ["T01"], "llm_granular": ["G06", "G07"]},
    "H04": {"llm_paraphrase": ["P06"], "llm_partial": [], "llm_granular": ["G08", "G09"]},
    "H05": {"llm_paraphrase": ["P03"], "llm_partial": [], "llm_granular": ["G10"]},
    "H06": {"llm_paraphrase": ["P08"], "llm_partial": [], "llm_granular": ["G11"]},
    "H07": {"llm_paraphrase": ["P05"], "llm_partial": ["T05"], "llm_granular": ["G12"]},
    "H08": {"llm_paraphrase": ["P10"], "llm_partial": [], "llm_granular": ["G13"]},
    "H09": {"llm_paraphrase": ["P09"], "llm_partial": [], "llm_granular": ["G14"]},
    "H10": {"llm_paraphrase": ["P07"], "llm_partial": [], "llm_granular": ["G15", "G16"]},
}


def missing() -> str | None:
    """Why the demo cannot be used here (a checkout without data/demo), or None."""
    return None if (DEMO / "themes" / "human.csv").exists() else f"{DEMO} not found"


@functools.lru_cache(maxsize=1)
def themes() -> pd.DataFrame:
    """Every theme of SETS in one table (set, theme_id, name, text), in set then file order."""
    return pd.concat(
        [read_theme_file(DEMO / "themes" / f) for f in SETS.values()], ignore_index=True
    )[["set", "theme_id", "name", "text"]]


def truth(set_b: str) -> np.ndarray:
    """The known match matrix human (rows) × set_b (columns), True where mapped."""
    t = themes()
    a_ids = t.loc[t["set"] == "human", "theme_id"].tolist()
    b_ids = t.loc[t["set"] == set_b, "theme_id"].tolist()
    T = np.zeros((len(a_ids), len(b_ids)), dtype=bool)
    for i, h in enumerate(a_ids):
        for b in MAPPING[h][set_b]:
            T[i, b_ids.index(b)] = True
    return T


@functools.lru_cache(maxsize=4)
def similarity(method: str) -> np.ndarray:
    """Every demo theme against every other with one real method (kinds' similarity_for):
    a square matrix in themes() order."""
    t = themes()
    return similarity_for(DEFAULT_METHODS[method], t, t)


def block(S: np.ndarray, set_a: str, set_b: str) -> np.ndarray:
    t = themes()
    ia = np.flatnonzero(t["set"].to_numpy() == set_a)
    ib = np.flatnonzero(t["set"].to_numpy() == set_b)
    return S[np.ix_(ia, ib)]
