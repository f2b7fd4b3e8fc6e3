"""Theme and segment tables as plain column lists, read with pyarrow alone.

The embedding job reads them this way so that it never imports pandas (45 MB of its peak
memory beside the model, 0.3 s of a fully cached run); the columns hold the same values
io.themes.read_themes_parquet gives (list columns as lists, never None).
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
