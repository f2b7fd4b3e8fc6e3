"""Vector tables: parquet of a set's columns beside a fixed-size float32 `embedding` column,
with the provenance in the schema's metadata. Not imported by embed.encode (a text's sha256 is
embed.cache's), which runs where pyarrow is not installed (bench/README.md, "GPU")."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from themesim import __version__
from themesim.embed.cache import text_sha256
from themesim.io.files import atomic_path

if TYPE_CHECKING:  # pandas only where a table is read back: the embedding job needs none
    import pandas as pd

    from themesim.embed.models import ModelSource

EMBEDDING_META_KEY = b"themesim.embedding"


def write_vector_table(path, columns: dict, emb: np.ndarray, meta: dict) -> None:
    """Parquet of the given columns plus `embedding` (fixed-size float32 list) and metadata."""
    dim = int(emb.shape[1]) if emb.ndim == 2 else 0
    flat = pa.array(np.ascontiguousarray(emb, dtype=np.float32).reshape(-1), pa.float32())
    data = {k: pa.array(v) for k, v in columns.items()}
    data["embedding"] = pa.FixedSizeListArray.from_arrays(flat, dim)
    meta = meta | {"dim": dim, "normalized": True, "themesim_version": __version__}
    table = pa.table(data).replace_schema_metadata(
        {EMBEDDING_META_KEY: json.dumps(meta, sort_keys=True)}
    )
    with atomic_path(path, checksum=True) as tmp:
        pq.write_table(table, tmp)


def write_embeddings(path, themes, emb: np.ndarray, source: ModelSource, method: str) -> None:
    """Parquet: theme_id, name, text, text_sha256, embedding (fixed-size float32 list)."""
    columns = {
        "theme_id": list(themes["theme_id"]),  # a DataFrame or embed.columns' lists
        "name": list(themes["name"]),
        "text": list(themes["text"]),
        "text_sha256": [text_sha256(t) for t in themes["text"]],
    }
    write_vector_table(path, columns, emb, asdict(source) | {"method": method})


def read_vector_table(path) -> tuple[pd.DataFrame, np.ndarray, dict]:
    """The non-vector columns, the embedding matrix and the metadata of a vector table."""
    table = pq.read_table(path)
    col = table.column("embedding").combine_chunks()
    dim = col.type.list_size
    emb = col.flatten().to_numpy(zero_copy_only=False).reshape(-1, dim)
    meta = json.loads((table.schema.metadata or {}).get(EMBEDDING_META_KEY, b"{}"))
    return table.drop_columns(["embedding"]).to_pandas(), emb, meta


def read_embeddings(path) -> tuple[list[str], np.ndarray, dict]:
    """Theme ids, the embedding matrix and the provenance metadata of one parquet file."""
    columns, emb, meta = read_vector_table(path)
    return columns["theme_id"].tolist(), emb, meta
