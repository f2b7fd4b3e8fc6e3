"""The paraphrase ceiling: how similar a method finds a theme and its own paraphrases.

Per method, the ceiling of a reference theme is the median similarity between the theme and
k LLM paraphrases of it (themesim.llm.paraphrase); the study's ceiling is the median over the
reference themes. Against it, the Hungarian matched median is put as a share of the ceiling and
as normalised alignment (observed − null) / (ceiling − null), with the null model's median
best as the floor: 0 = no better than word salad, 1 = as close as a paraphrase.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from themesim.io.inputs import read_checked_parquet
from themesim.similarity import cosine

CEILING_COLUMNS = ["ceiling_median", "matched_sim_pct_of_ceiling", "normalised_alignment"]
THEME_CEILING_COLUMNS = ["theme_id", "ceiling", "n_paraphrases"]


def theme_ceilings(similarities: Sequence) -> np.ndarray:
    """Per theme, the median of its similarities to its paraphrases (NaN when it has none)."""
    out = []
    for sims in similarities:
        sims = np.asarray(sims, dtype=np.float64).ravel()
        if not np.isfinite(sims).all():
            raise ValueError("paraphrase similarities must be finite")
        out.append(float(np.median(sims)) if sims.size else math.nan)
    return np.asarray(out, dtype=np.float64)


def theme_ceilings_cosine(theme_vectors, paraphrase_vectors: Sequence) -> np.ndarray:
    """theme_ceilings of cosines: row i of theme_vectors against paraphrase_vectors[i] (k x d)."""
    T = np.asarray(theme_vectors, dtype=np.float64)
    if len(paraphrase_vectors) != T.shape[0]:
        raise ValueError(f"{len(paraphrase_vectors)} paraphrase blocks for {T.shape[0]} themes")
    return theme_ceilings(
        [
            cosine(T[i : i + 1], np.asarray(P, dtype=np.float64))[0]
            for i, P in enumerate(paraphrase_vectors)
        ]
    )


def normalised_alignment(observed: float, null: float, ceiling: float) -> float:
    """(observed − null) / (ceiling − null); NaN when an input is NaN or ceiling ≤ null (the
    method cannot tell a paraphrase from word salad, so no scale exists)."""
    if not all(np.isfinite([observed, null, ceiling])) or ceiling <= null:
        return math.nan
    return float((observed - null) / (ceiling - null))


def pct_of_ceiling(observed: float, ceiling: float) -> float:
    """100 · observed / ceiling; NaN unless the ceiling is a positive number."""
    if not (np.isfinite(observed) and np.isfinite(ceiling)) or ceiling <= 0:
        return math.nan
    return float(100.0 * observed / ceiling)


def null_medians(themes: pd.DataFrame) -> dict[tuple[str, str], float]:
    """(set_a, set_b) -> median over A's themes of null_best_median (themes.csv, side a);
    NaN when the null model is off."""
    out = {}
    a = themes[themes["side"] == "a"]
    for (set_a, set_b), rows in a.groupby(["set_a", "set_b"], sort=False):
        values = pd.to_numeric(rows.get("null_best_median"), errors="coerce")
        values = values.dropna() if values is not None else pd.Series(dtype=float)
        out[(set_a, set_b)] = float(values.median()) if len(values) else math.nan
    return out


def ceiling_columns(
    comparisons: pd.DataFrame, themes: pd.DataFrame, ceilings, reference: str
) -> pd.DataFrame:
    """comparisons with CEILING_COLUMNS appended. The ceiling belongs to the reference's
    themes, so rows whose set_a is another set get NaN."""
    ceiling = ceiling_median(ceilings)
    nulls = null_medians(themes)
    out = comparisons.copy()
    cols = {c: [] for c in CEILING_COLUMNS}
    for r in comparisons.to_dict("records"):
        own = r["set_a"] == reference
        c = ceiling if own else math.nan
        obs = float(r["matched_sim_median"])
        null = nulls.get((r["set_a"], r["set_b"]), math.nan)
        cols["ceiling_median"].append(c)
        cols["matched_sim_pct_of_ceiling"].append(pct_of_ceiling(obs, c))
        cols["normalised_alignment"].append(normalised_alignment(obs, null, c))
    for c in CEILING_COLUMNS:
        out[c] = cols[c]
    return out


SIMILARITY_COLUMNS = ["theme_id", "paraphrase_index", "similarity"]


def ceilings_on_scale(ceiling_path, scale) -> np.ndarray:
    """Each reference theme's ceiling from the ceiling rule's file (one row per theme and
    paraphrase, raw similarity), put on the method's scale first."""
    long = read_checked_parquet(ceiling_path, SIMILARITY_COLUMNS, "paraphrase similarity")
    per_theme = [
        scale(rows["similarity"].to_numpy(np.float64)[None, :])[0]
        for _, rows in long.groupby("theme_id", sort=False)
    ]
    return theme_ceilings(per_theme)


def ceiling_median(ceilings) -> float:
    """Median of the themes' finite ceilings; NaN when none is."""
    ceilings = np.asarray(ceilings, dtype=np.float64)
    finite = ceilings[np.isfinite(ceilings)]
    return float(np.median(finite)) if finite.size else math.nan


def join_ceiling(comparisons, themes, ceiling_path, reference: str, scale) -> pd.DataFrame:
    """ceiling_columns from the ceiling rule's file, on the method's scale so the ceiling and
    the matched median agree."""
    return ceiling_columns(comparisons, themes, ceilings_on_scale(ceiling_path, scale), reference)
