"""Similarity matrices: from embeddings, from TF-IDF, from CSV; stored in long form."""

from __future__ import annotations

import csv
import json
import logging
import math
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from themesim.errors import InputError
from themesim.io.files import atomic_path
from themesim.io.inputs import not_text
from themesim.io.manifest import verify
from themesim.tfidf import normalize, vectorizer

SIMILARITY_META_KEY = b"themesim.similarity"


# Cosines this close to +-1 are +-1: identical texts must reach a threshold of 1.0, which
# rounding (TF-IDF 0.9999999999999991) missed. Distinct texts never come this close.
UNIT_TOL = 1e-9


def snap_unit(S) -> np.ndarray:
    """Cosines clipped to [-1, 1], with those within UNIT_TOL of +-1 set to exactly +-1."""
    S = np.clip(np.asarray(S, dtype=np.float64), -1.0, 1.0)
    S[S > 1.0 - UNIT_TOL] = 1.0
    S[S < UNIT_TOL - 1.0] = -1.0
    return S


def _unit_rows(X) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms > 0, norms, 1.0)


def cosine(emb_a: np.ndarray, emb_b: np.ndarray) -> np.ndarray:
    """Cosine of the rows, renormalised in float64 (float32 unit vectors are 1 +- 1e-7 long)."""
    return snap_unit(_unit_rows(emb_a) @ _unit_rows(emb_b).T)


# Scripts written without spaces between words: word TF-IDF sees a whole phrase as one term.
_NO_SPACES = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f]")
CHAR_NGRAMS = (1, 3)


def tfidf_options(spec: dict, where: str = "tfidf") -> dict:
    """TfidfVectorizer options of a tfidf method (`analyzer`, `ngram_range`)."""
    analyzer = spec.get("analyzer") or "word"
    low, high = spec.get("ngram_range") or ((1, 1) if analyzer == "word" else CHAR_NGRAMS)
    if not 1 <= low <= high:
        raise InputError(
            f"{where}.ngram_range", f"[{low}, {high}] is not [min, max]", "Write e.g. [1, 3]"
        )
    return {"analyzer": analyzer, "ngram_range": (int(low), int(high))}


def tfidf(texts_a: list[str], texts_b: list[str] | None, **vectorizer_options) -> np.ndarray:
    """Cosine of TF-IDF vectors fitted on the union of both sets (seed 002).

    texts_b None: within-set similarity, fitted on set A alone. Warns when a text has no
    terms (it then scores 0 against everything) and when word terms meet text without spaces.
    """
    texts = list(texts_a) + list(texts_b or [])
    vec = vectorizer(**vectorizer_options)
    hint = "set analyzer: char_wb on the method for text without spaces (e.g. Chinese)"
    try:
        X = vec.fit_transform(texts)
    except ValueError as e:  # every text was a stop word, punctuation or a single letter
        raise InputError(
            "tfidf", f"cannot build a vocabulary ({e})", f"Give the themes longer texts, or {hint}"
        ) from e
    log = logging.getLogger("themesim")
    empty = np.flatnonzero(np.diff(X.indptr) == 0)
    if len(empty):
        log.warning(
            "tfidf: %d of %d texts have no terms and score 0 against every theme (first: %r); %s",
            len(empty),
            len(texts),
            texts[empty[0]][:80],
            hint,
        )
    if vectorizer_options.get("analyzer", "word") == "word":
        spaceless = [t for t in texts if _NO_SPACES.search(t)]
        if spaceless:
            log.warning(
                "tfidf: %d of %d texts are in a script without spaces between words (first: "
                "%r), so word terms are whole phrases and scores are near 0; %s",
                len(spaceless),
                len(texts),
                spaceless[0][:80],
                hint,
            )
    n = len(texts_a)
    return _blocked_cosine(X[:n], X[n:] if texts_b is not None else X)


# Rows of a matrix computed (or a long-form file written and read) at a time: the dense
# result is the only n_a x n_b array held, never its float64 copies or per-cell objects.
BLOCK_CELLS = 1 << 22


def _blocked_cosine(X_a, X_b) -> np.ndarray:
    """snap_unit(cosine_similarity(X_a, X_b)) of sparse rows, `BLOCK_CELLS` cells at a
    time into one output: the same bits (each cell is the same sum), a third of the peak."""
    A, B = normalize(X_a), normalize(X_b).T.tocsc()
    out = np.empty((A.shape[0], B.shape[1]), dtype=np.float64)
    step = max(1, BLOCK_CELLS // max(B.shape[1], 1))
    for i in range(0, A.shape[0], step):
        block = A[i : i + step] @ B
        out[i : i + step] = snap_unit(block.toarray() if hasattr(block, "toarray") else block)
    return out


# Precomputed scores are on the cosine scale (an angular method converts them afterwards).
SCORE_RANGE = (-1.0, 1.0)


def _matrix_rows(path: Path) -> list[list[str]]:
    """The non-blank rows of a matrix CSV in UTF-8, header first: at least one below it."""
    if not path.is_file():
        raise InputError(str(path), "file not found", "Check the path in the command or config")
    raw = path.read_bytes()
    office = not_text(path, raw)  # an .xlsx saved as .csv is not "not UTF-8"
    if office is not None:
        raise office
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(
            str(path), f"not UTF-8 (byte {e.start})", "Re-save the file as UTF-8"
        ) from e
    rows = [r for r in csv.reader(text.splitlines()) if any(c.strip() for c in r)]
    if len(rows) < 2 or len(rows[0]) < 2:
        raise InputError(
            str(path),
            "needs a header row of B names and at least one row of A name + scores",
            "Write rows = A theme names, header = B theme names",
        )
    return rows


def _check_unique_names(path: Path, a_names: list[str], b_names: list[str]) -> None:
    """A matrix names each theme once, in its rows and in its header."""
    for names, side in ((a_names, "row"), (b_names, "column")):
        seen = set()
        for n in names:
            if n in seen:
                raise InputError(
                    str(path), f"{side} name {n!r} appears twice", "Make theme names unique"
                )
            seen.add(n)


def read_matrix_csv(
    path, *, score_range: tuple[float, float] | None = None, clamp: bool = False
) -> tuple[np.ndarray, list[str], list[str]]:
    """A matrix CSV: header = B names (first cell ignored), first column = A names.

    score_range: a score outside it is an error naming file, row and column, or with
    clamp=True is clipped into it with a warning; None reads any finite number.
    """
    path = Path(path)
    rows = _matrix_rows(path)
    b_names = [c.strip() for c in rows[0][1:]]
    a_names, values = [], []
    clipped, first = 0, ""
    for line_no, r in enumerate(rows[1:], start=2):
        if len(r) != len(b_names) + 1:
            raise InputError(
                f"{path}, row {line_no}",
                f"has {len(r) - 1} scores but the header names {len(b_names)} B themes",
                "Give every row one score per header column",
            )
        a_names.append(r[0].strip())
        row = []
        for name, cell in zip(b_names, r[1:], strict=True):
            try:
                v = float(cell)
            except ValueError:
                v = math.nan
            if not math.isfinite(v):
                raise InputError(
                    f"{path}, row {line_no} ({r[0].strip()!r}), column {name!r}",
                    f"score {cell.strip()!r} is not a finite number",
                    "Fill every cell with a number; remove NaN, inf and blanks",
                )
            if score_range and not score_range[0] <= v <= score_range[1]:
                low, high = score_range
                at = f"{path}, row {line_no} ({r[0].strip()!r}), column {name!r}"
                if not clamp:
                    raise InputError(
                        at,
                        f"score {cell.strip()} is outside [{low:g}, {high:g}], the cosine scale",
                        f"Rescale the scores to [{low:g}, {high:g}] (e.g. divide 0-5 ratings "
                        "by 5), or set clamp: true on the method to clip them",
                    )
                clipped += 1
                first = first or f"{at}: {cell.strip()}"
                v = min(max(v, low), high)
            row.append(v)
        values.append(row)
    if clipped:
        logging.getLogger("themesim").warning(
            "%s: %d score(s) outside [%g, %g] clipped (clamp: true); first at %s",
            path,
            clipped,
            *score_range,
            first,
        )
    _check_unique_names(path, a_names, b_names)
    return np.array(values, dtype=np.float64), a_names, b_names


def align_matrix(S: np.ndarray, row_names, col_names, a_names, b_names, where: str) -> np.ndarray:
    """Reorder a named matrix to the theme order of sets A and B; every name must fit."""
    rows = {n: i for i, n in enumerate(row_names)}
    cols = {n: j for j, n in enumerate(col_names)}
    if set(rows) == set(b_names) and set(cols) == set(a_names) and set(a_names) != set(b_names):
        raise InputError(
            where,
            "the matrix is transposed: its rows are the themes of B and its columns those of A",
            "Write rows = A theme names, header = B theme names (A is the set before "
            "'__vs__' in the file name)",
        )
    for names, index, side in ((a_names, rows, "row"), (b_names, cols, "column")):
        missing = [n for n in names if n not in index]
        extra = sorted(set(index) - set(names))
        if missing or extra:
            raise InputError(
                where,
                f"{side} labels do not match the theme names "
                f"(missing: {missing[:5]}, unknown: {extra[:5]})",
                f"Label {side}s with the exact theme names of set {'A' if side == 'row' else 'B'} "
                "(rows = A theme names, header = B theme names)",
            )
    return S[np.ix_([rows[n] for n in a_names], [cols[n] for n in b_names])]


def _positions(ids: pa.ChunkedArray, pos: dict[str, int]) -> np.ndarray:
    """Each id's index in `pos` (-1 for an id not asked for), through the ids' dictionary."""
    d = ids.combine_chunks().dictionary_encode()
    lookup = np.array([pos.get(x, -1) for x in d.dictionary.to_pylist()], dtype=np.int64)
    return lookup[d.indices.to_numpy(zero_copy_only=False)] if len(lookup) else lookup


def to_long(S: np.ndarray, a_ids, b_ids) -> pd.DataFrame:
    """Long form a_id, b_id, similarity; A-major order."""
    n_a, n_b = S.shape
    return pd.DataFrame(
        {
            "a_id": np.repeat(np.asarray(a_ids, dtype=object), n_b),
            "b_id": np.tile(np.asarray(b_ids, dtype=object), n_a),
            "similarity": np.asarray(S, dtype=np.float64).reshape(-1),
        }
    )


# Rows of a long-form file per row group: pyarrow's default, so a file written in blocks
# holds the same bytes as one written whole.
ROW_GROUP = 1024 * 1024
STREAM_ABOVE = 64 << 20  # bytes of a file read from disk by row group, not into memory first
_SIMILARITY_SCHEMA = pa.schema(
    [("a_id", pa.string()), ("b_id", pa.string()), ("similarity", pa.float64())]
)


def write_similarity(path, S: np.ndarray, a_ids, b_ids, meta: dict) -> None:
    """The long form (a_id, b_id, similarity; A-major) of S, written one row group at a time:
    besides S it holds one row group's ids, not a Python object per cell (146 bytes a cell
    when built whole)."""
    S = np.asarray(S, dtype=np.float64)
    n_a, n_b = S.shape
    a = pa.array([str(x) for x in a_ids], pa.string())
    b = pa.array([str(x) for x in b_ids], pa.string())
    flat = S.reshape(-1)
    schema = _SIMILARITY_SCHEMA.with_metadata(
        {SIMILARITY_META_KEY: json.dumps(meta, sort_keys=True)}
    )
    with atomic_path(path) as tmp, pq.ParquetWriter(tmp, schema) as writer:
        for start in range(0, n_a * n_b, ROW_GROUP) if n_a * n_b else [0]:
            idx = np.arange(start, min(start + ROW_GROUP, n_a * n_b))
            block = pa.table(
                [a.take(idx // n_b), b.take(idx % n_b), pa.array(flat[idx], pa.float64())],
                schema=schema,
            )
            writer.write_table(block)


def read_similarity(path, a_ids, b_ids) -> np.ndarray:
    """The n_a x n_b matrix of a long-form file, in the given id order; a file its job listed
    in a manifest must be there and unchanged (themesim.io.manifest). Read one row group at a
    time into the matrix."""
    if not os.path.exists(path):
        verify(path)  # a listed file: says to rerun its job
    if os.path.getsize(path) > STREAM_ABOVE:
        verify(path)  # hashed in chunks, then read from disk: the file never sits in memory
        source = str(path)
    else:
        data = Path(path).read_bytes()  # read once for the hash and the table
        verify(path, data)
        source = pa.BufferReader(data)
    a_pos = {str(x): i for i, x in enumerate(a_ids)}
    b_pos = {str(x): j for j, x in enumerate(b_ids)}
    S = np.full((len(a_pos), len(b_pos)), np.nan)
    with pq.ParquetFile(source) as f:
        for g in range(f.num_row_groups):
            t = f.read_row_group(g, columns=["a_id", "b_id", "similarity"])
            rows = _positions(t.column("a_id"), a_pos)
            cols = _positions(t.column("b_id"), b_pos)
            keep = (rows >= 0) & (cols >= 0)
            S[rows[keep], cols[keep]] = t.column("similarity").to_numpy()[keep]
    nan = np.isnan(S)
    if nan.any():
        absent = [n for n, i in a_pos.items() if nan[i].all()]
        absent += [n for n, j in b_pos.items() if nan[:, j].all()]
        if absent:
            raise InputError(
                str(path),
                f"does not hold every theme pair (no pair of {absent[:5]})",
                "Delete it and rerun the workflow",
            )
        raise InputError(str(path), "has missing pairs", "Delete it and rerun the workflow")
    return S
