"""The rated-pairs CSV of `calibration.pairs`, read one way for the calibration step, for
the embedding job that encodes its texts into the vector cache and for the judge's similarity
job that judges its pairs into the judgement cache (so all see the same strings, and the
calibration job finds every vector and judgement cached)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from themesim.errors import InputError

TEXT_COLUMNS = ("text_a", "text_b")


def read_pairs_csv(path) -> pd.DataFrame:
    """Every column as text, empty cells as "" (never NaN)."""
    where = str(path)
    if not Path(path).is_file():
        raise InputError(where, "file not found", "Point calibration.pairs at a CSV file")
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except (pd.errors.ParserError, UnicodeDecodeError) as e:
        raise InputError(where, f"is not a readable UTF-8 CSV ({e})", "Save it as CSV") from e


def rated_pair_columns(path) -> tuple[list[str], list[str]]:
    """(text_a, text_b) of every row; InputError as read_pairs_csv, or for a missing column."""
    df = read_pairs_csv(path)
    missing = [c for c in TEXT_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(
            str(path), f"lacks column(s) {', '.join(missing)}", "Give text_a, text_b and label"
        )
    return df["text_a"].tolist(), df["text_b"].tolist()


def rated_pair_texts(path) -> list[str]:
    """text_a then text_b of every row; errors as rated_pair_columns."""
    a, b = rated_pair_columns(path)
    return a + b
