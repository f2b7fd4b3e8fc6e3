"""Sentence-transformer embeddings from packaged models or local paths, never a hub.

sentence_transformers and torch are imported inside functions: importing them costs
seconds and the CLI and the workflow parse must not pay for it.
"""

from __future__ import annotations

import gc
import logging
import os
from dataclasses import dataclass

import numpy as np

from themesim.embed.cache import EmbeddingCache, cache_dir, model_key, text_sha256
from themesim.embed.device import (
    batch_rows,
    check_device,
    device_type,
    import_torch,
    release_freed_memory,
    set_threads,
)
from themesim.embed.models import ModelSource, resolve_model
from themesim.embed.passes import cpu_passes, device_passes, encode_passes_float32, length_groups
from themesim.embed.plain import PlainEncoder, plain_config
from themesim.embed.tokens import token_lengths, token_table, warn_truncated
from themesim.errors import InputError

log = logging.getLogger("themesim")


_MODELS: dict = {}  # loaded models by (path, device, dtype): one load per process


def load_model(source: ModelSource, *, device: str = "cpu", dtype: str = "float32"):
    """The SentenceTransformer for a source, loaded once per process; on the CPU in float32,
    a model of the plain form runs without sentence-transformers (embed.plain: same vectors,
    about 50 MB less memory)."""
    key = (source.path, device, dtype)
    if key not in _MODELS:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        torch = import_torch()
        check_device(torch, device, dtype, source.model)

        plain = plain_config(source.path) if (device, dtype) == ("cpu", "float32") else None
        if plain is not None:
            _MODELS[key] = PlainEncoder(source.path, plain, device=device)
            return _MODELS[key]
        kwargs = {}
        if dtype != "float32":
            kwargs["model_kwargs"] = {"torch_dtype": getattr(torch, dtype)}
        _MODELS[key] = sentence_transformer(source.path, device=device, **kwargs)
    return _MODELS[key]


def sentence_transformer(path: str, *, device: str = "cpu", **kwargs):
    """SentenceTransformer(path, device=device, **kwargs), torch imported first as
    embed.device.import_torch sets it up; the one import of sentence-transformers outside
    the coder's training (coder/train.py)."""
    import_torch()
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device=device, **kwargs)


def encode(
    texts: list[str],
    source: ModelSource,
    *,
    batch_size: int | None = None,
    device: str = "cpu",
    dtype: str = "float32",
    threads: int | None = None,
) -> np.ndarray:
    """L2-normalised float32 embeddings, one row per text, in the order given.

    A text's vector depends on the text alone, never on the texts encoded with it: every
    forward pass holds `batch_rows(batch_size, device)` texts of one token length (a short
    batch is filled with repeats of its own texts), so nothing is padded and every pass of a
    length has one shape. Padding, and the batch's row count, otherwise change a vector's last
    bits (measured with MiniLM on CPU, 2 threads: up to 1.5e-7, a one-text batch against
    larger ones), which made a cached vector depend on which job or set encoded it first.
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
    rows = batch_rows(batch_size, device)
    on_cpu = device_type(device) == "cpu"
    prompt = None if on_cpu else _default_prompt(model)
    if on_cpu or prompt:
        # model.encode adds a default prompt: count the tokens it will see
        lengths = token_lengths(model, [prompt + t for t in texts] if prompt else texts)
        take = None
    else:
        lengths, take = token_table(model, texts)
    warn_truncated(model, texts, source.model, None if prompt else lengths)
    groups = length_groups(lengths, rows)
    if on_cpu:
        out = cpu_passes(model, texts, groups, rows, workers)
    elif prompt:
        out = encode_passes_float32(model, texts, groups, rows)
    else:
        out = device_passes(model, texts, groups, rows, device, take)
    check_finite(out, texts, source.model, device, dtype)
    return out


def _default_prompt(model) -> str | None:
    name = getattr(model, "default_prompt_name", None)
    return (getattr(model, "prompts", None) or {}).get(name) if name else None


def check_finite(out: np.ndarray, texts: list[str], model: str, device: str, dtype: str) -> None:
    """InputError when a vector holds inf or NaN (a half precision's overflow) rather than
    letting it reach every similarity."""
    bad = np.flatnonzero(~np.isfinite(out).all(axis=1))
    if len(bad):
        raise InputError(
            f"model {model} on {device} in {dtype}",
            f"gave non-finite vectors (inf or NaN) for {len(bad)} of {len(texts)} texts, e.g. "
            f"text {bad[0] + 1} ({texts[bad[0]][:40]!r})",
            "float16's range can overflow inside some models, T5's among them: set the "
            "method's `dtype: bfloat16` (or float32)",
        )


def release_models() -> None:
    """Drop the loaded models and return their memory, for a job whose encoding is done: its
    writes then import pandas (through pyarrow) beside a smaller process, not the model."""
    _MODELS.clear()
    gc.collect()
    release_freed_memory()


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
    batch_size: int | None = None,
    device: str = "cpu",
    dtype: str = "float32",
    threads: int | None = None,
) -> tuple[np.ndarray, EncodeStats]:
    """encode() over the distinct texts, taking what it can from the embedding cache.

    The model is loaded only when some text is missing from the cache.
    """
    texts = list(texts)
    shas = [text_sha256(t) for t in texts]
    unique = dict(zip(shas, texts, strict=True))  # first occurrence order
    stats = EncodeStats(texts=len(texts), unique=len(unique))
    cache = None
    found: dict[str, np.ndarray] = {}
    if cache_root is not None and unique:
        key = model_key(source, device=device, dtype=dtype, rows=batch_rows(batch_size, device))
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


def encode_with(spec: dict, texts: list[str], threads, *, cache=False, what: str = "embed"):
    """Vectors of `texts` with the method's model; `cache` is the config's `embedding_cache`
    (None = the default folder, False = no cache, else a folder)."""
    source = resolve_model(spec["model"], spec.get("path"))
    root = cache_dir(cache)
    emb, stats = embed_texts(
        texts,
        source,
        cache_root=root,
        batch_size=spec.get("batch_size"),
        device=spec.get("device") or "cpu",
        dtype=spec.get("dtype") or "float32",
        threads=threads,
    )
    log.info("%s: %s (cache: %s)", what, stats, root or "off")
    return emb, source
