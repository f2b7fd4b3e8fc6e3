"""Content-addressed cache of embedding vectors, shared by every set, job and study.

A vector is found by the model key (model, weights version or folder fingerprint, the
library versions and every setting that changes vectors) and the sha256 of the text. Each
vector is one small .npy file (exact float32) in a folder per model key, sharded by the first
two hex digits of the text hash (themesim.store.ContentFiles, which says why these are files).
Files are written to a temporary name and renamed, so a reader never sees half a vector and
parallel jobs (also on a cluster's shared file system) need no lock: two jobs writing the same
text write the same bytes. The folder lives outside Snakemake's outputs, so a failed or killed
job never deletes it.

Each file is the vector's .npy followed by a checksum (TRAILER and the sha256 of the model
key's folder name, the text's hash and the .npy bytes; np.load ignores it): a file whose numbers
were changed, truncated or copied from another text or model fails the check, counts as a miss
and is written again.

Vectors do not depend on which other texts were encoded with them (see embed.encode: every
forward pass has a fixed number of rows of one token length), so a run that takes vectors
from the cache writes the same bytes as one that encodes them, whichever job came first.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from importlib import metadata
from pathlib import Path

import numpy as np

from themesim.store import ContentFiles, atomic_write

ENV = "THEMESIM_EMBED_CACHE"
# Bump when the way vectors are computed changes (the batching rule in embed.encode). An
# accelerator's passes repeat token rows on the device and normalise in float32 (/3), the
# whole pass before it is cut to its texts (/4: a short group's last bits changed on a GPU).
SCHEME = "equal-token-length-fixed-rows/2"
DEVICE_SCHEME = "equal-token-length-fixed-rows/4"
_HEAD = 1 << 20  # bytes of a large weight file hashed at each end
TRAILER = b"\nthemesim-sha256:"


def text_sha256(text: str) -> str:
    """A text's key in the cache and its column in the vector tables."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def default_dir() -> Path:
    return Path(os.environ.get(ENV) or Path.home() / ".cache" / "themesim" / "embeddings")


def cache_dir(setting) -> Path | None:
    """The folder the config's `embedding_cache` names: null = default, false = no cache."""
    if setting is None or setting is True:
        return default_dir()
    if setting is False or setting == "":
        return None
    return Path(os.path.expandvars(str(setting))).expanduser()


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def folder_fingerprint(path) -> str:
    """sha256 over every file's relative path, size and content (large files: both ends).

    Hashing the ends of multi-GB weight files keeps this to a second; any re-download,
    conversion or fine-tune changes the size or the safetensors header at the start.
    """
    h = hashlib.sha256()
    root = Path(path)
    for p in sorted(q for q in root.rglob("*") if q.is_file()):
        size = p.stat().st_size
        h.update(f"{p.relative_to(root).as_posix()}\0{size}\0".encode())
        with open(p, "rb") as f:
            if size <= 2 * _HEAD:
                h.update(f.read())
            else:
                h.update(f.read(_HEAD))
                f.seek(-_HEAD, os.SEEK_END)
                h.update(f.read(_HEAD))
    return h.hexdigest()


def model_key(source, *, rows: int, device: str = "cpu", dtype: str = "float32") -> dict:
    """Everything that changes a text's vector; thresholds are not among it, and batch size
    only through the rows per forward pass (embed.device.batch_rows, which also depend on
    the device)."""
    if source.package:
        weights = f"{source.package}=={source.package_version}"
    else:
        weights = f"folder-sha256:{folder_fingerprint(source.path)}"
    device = str(device).split(":")[0]  # cuda:0 and cuda:1 compute alike
    return {
        "model": source.model,
        "weights": weights,
        "sentence_transformers": _dist_version("sentence-transformers"),
        "transformers": _dist_version("transformers"),
        "torch": _dist_version("torch"),
        "device": device,
        "dtype": dtype,
        "normalized": True,
        "scheme": SCHEME if device == "cpu" else DEVICE_SCHEME,
        "rows": rows,
    }


def key_name(key: dict) -> str:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", key["model"]).strip("_")[-60:]
    return f"{slug}-{digest}"


class EmbeddingCache:
    """Vectors of one model key under `root/<model>-<key hash>/`."""

    def __init__(self, root, key: dict):
        self.key = key
        self.dir = Path(root) / key_name(key)
        self.files = ContentFiles(self.dir, ".npy")

    def _path(self, sha: str) -> Path:
        return self.files.path(sha)

    def _digest(self, sha: str, npy: bytes) -> bytes:
        return hashlib.sha256(f"{self.dir.name}/{sha}\0".encode() + npy).hexdigest().encode()

    def get(self, shas) -> dict[str, np.ndarray]:
        """The cached vectors among `shas`. A missing file is a miss; so is one that fails
        its checksum (other numbers, truncated, another text's or an older version's
        file), which is removed so that `put` writes it again."""
        found = {}
        for sha in shas:
            data = self.files.read(sha)
            if data is None:
                continue
            npy, tag, digest = data.rpartition(TRAILER)
            v = None
            if tag and digest == self._digest(sha, npy):
                try:
                    v = np.load(io.BytesIO(npy), allow_pickle=False)
                except (OSError, ValueError, EOFError):
                    v = None
            if v is not None and v.dtype == np.float32 and v.ndim == 1:
                found[sha] = v
            else:
                self.files.drop(sha)
        return found

    def put(self, vectors: dict[str, np.ndarray]) -> int:
        """Store new vectors (temporary file + rename); returns how many files were written."""
        if not vectors:
            return 0
        self.dir.mkdir(parents=True, exist_ok=True)
        about = self.dir / "key.json"
        if not about.exists():
            atomic_write(about, json.dumps(self.key, indent=1, sort_keys=True).encode())
        written = 0
        for sha, v in vectors.items():
            if self.files.path(sha).exists():
                continue
            buf = _npy_bytes(np.ascontiguousarray(v, dtype=np.float32))
            written += self.files.write(sha, buf + TRAILER + self._digest(sha, buf))
        return written


def _npy_bytes(v: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, v, allow_pickle=False)
    return buf.getvalue()
