"""Theme and segment tables as plain column lists, read with pyarrow alone.

The embedding job reads them this way, without the theme reader's DataFrames beside the
model; the columns hold the same values io.themes.read_themes_parquet gives (list columns
as lists, never None). (It imports pandas all the same, for the rated pairs' one reader,
io.rated_pairs.)
"""

from __future__ import annotations

from themesim.io.inputs import read_checked_table

THEME_COLUMNS = ["theme_id", "name", "text", "keywords"]
SEGMENT_COLUMNS = ["transcript", "segment", "text"]


def read_columns(path, columns: list[str], what: str) -> dict[str, list]:
    """The given columns of a parquet file themesim wrote, as lists; a clear error otherwise."""
    table = read_checked_table(path, columns, what)
    return {c: table.column(c).to_pylist() for c in columns}


def read_theme_columns(path) -> dict[str, list]:
    cols = read_columns(path, THEME_COLUMNS, "theme")
    cols["keywords"] = [[] if v is None else list(v) for v in cols["keywords"]]
    return cols


def read_segment_columns(path) -> dict[str, list]:
    return read_columns(path, SEGMENT_COLUMNS, "segment")
