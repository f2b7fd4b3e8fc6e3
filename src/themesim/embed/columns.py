"""Theme and segment tables as plain column lists, read with pyarrow alone.

The embedding job reads them this way so that it never imports pandas (45 MB of its peak
memory beside the model, 0.3 s of a fully cached run); the columns hold the same values
io.themes.read_themes_parquet gives (list columns as lists, never None).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from themesim.errors import InputError

THEME_COLUMNS = ["theme_id", "name", "text", "keywords"]
SEGMENT_COLUMNS = ["transcript", "segment", "text"]


def read_columns(path, columns: list[str], what: str) -> dict[str, list]:
    """The given columns of a parquet file themesim wrote, as lists; a clear error otherwise."""
    p = Path(path)
    if not p.is_file():
        raise InputError(str(path), "file not found", "Check the path and the file name.")
    try:
        # ParquetFile, not read_table: read_table goes through pyarrow.dataset, which
        # imports pandas.
        with pq.ParquetFile(str(p)) as f:
            table = f.read(columns=[c for c in columns if c in f.schema_arrow.names])
    except (pa.ArrowException, OSError) as e:
        raise InputError(
            str(path), f"is not a readable parquet file ({e})", "Re-create it with themesim."
        ) from e
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise InputError(
            str(path),
            f"is not a {what} table (missing columns {', '.join(missing)})",
            f"Point to a {what}s parquet file written by themesim.",
        )
    return {c: table.column(c).to_pylist() for c in columns}


def read_theme_columns(path) -> dict[str, list]:
    cols = read_columns(path, THEME_COLUMNS, "theme")
    cols["keywords"] = [[] if v is None else list(v) for v in cols["keywords"]]
    return cols


def read_segment_columns(path) -> dict[str, list]:
    return read_columns(path, SEGMENT_COLUMNS, "segment")
