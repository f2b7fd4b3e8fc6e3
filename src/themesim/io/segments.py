"""The segments table every job after ingest reads (transcript, segment, speaker, text,
start, end), written once by the transcripts' ingest.

Apart from transcripts.py, which parses the transcript formats (python-docx for .docx): the
jobs that only read the table import neither.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from themesim.io.files import atomic_path
from themesim.io.inputs import read_checked_parquet

SEGMENT_COLUMNS = ["transcript", "segment", "speaker", "text", "start", "end"]
_SCHEMA = pa.schema(
    [
        ("transcript", pa.string()),
        ("segment", pa.int64()),
        ("speaker", pa.string()),
        ("text", pa.string()),
        ("start", pa.float64()),
        ("end", pa.float64()),
    ]
)


def segment_columns() -> list[str]:
    """Columns of a segment table, in order."""
    return list(SEGMENT_COLUMNS)


def write_segments_parquet(df: pd.DataFrame, path) -> None:
    """Write a segment table; no pandas index or metadata, so equal tables give equal files."""
    missing = [c for c in SEGMENT_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"segment table lacks columns {missing}")
    data = {c: df[c].tolist() for c in SEGMENT_COLUMNS}
    with atomic_path(path) as tmp:
        pq.write_table(pa.Table.from_pydict(data, schema=_SCHEMA), tmp)


def read_segments_parquet(path) -> pd.DataFrame:
    """Read a table written by `write_segments_parquet`."""
    return read_checked_parquet(path, SEGMENT_COLUMNS, "segment")
