"""Every disk cache of the project, one mechanism: a value found by a key that names what made
it, written whole or not at all, and a miss (never an error) when it is missing, stale or
damaged. Three shapes of it, by what a cache holds:

* Rows (`open_sqlite`, `canonical_key`): the LLM callers' answers — results/cache/judge.sqlite,
  generate.sqlite, paraphrase.sqlite, coder.sqlite (themesim.llm.session.CacheTable). One
  SQLite file per caller, WAL mode so parallel jobs write safely, a row per request keyed by
  the sha256 of the canonical JSON of everything that changes the answer, committed at once.
  These files are archived with a study and read by sqlite3 by hand, so their tables and keys
  stay as they are: a cache written by an earlier version is read as it was.
* Kept values (`Kept`): one JSON value kept while a stamp (the sizes and mtimes of what it was
  made from) holds — the parsed config schema (themesim.defaults), the package files each
  workflow script runs (themesim.deps), a large file's sha256 (themesim.provenance). A stale
  stamp is a miss; an unwritable place only skips saving.
* Content-addressed files (`ContentFiles`): `<root>/<sha[:2]>/<sha><suffix>`, one file a value,
  written to a temporary name and renamed — the embedding vectors (themesim.embed.cache) and
  the TF-IDF keywords (themesim.embed.keyword_cache). These stay files, not rows of a
  database: the folder is shared by every study and job, also by the nodes of a cluster on a
  network file system, where SQLite's locks are not safe; files renamed into place need no
  lock (two jobs writing one key write the same bytes), a reader never sees half a value, and
  a vector file is the .npy that np.load reads, checked by the vector cache's own checksum.

`atomic_write` is the one way each file of the last two is written.

Not here: the packaged models unpacked once into $THEMESIM_MODEL_CACHE (the judge's GGUF joined
from its 22 pieces, llm/server.py; mpnet's folder unzipped, embed/models.py). They are installs
of gigabytes streamed to a temporary name and renamed, not values a key finds.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
from pathlib import Path


def atomic_write(path, data: bytes) -> None:
    """Write `data` to a temporary file beside `path` and rename it into place: a reader sees
    the old file or the new one, never part of one; parallel writers need no lock."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------- rows


def canonical_key(fields: dict) -> str:
    """sha256 of the canonical JSON of fields: the cache key of one request."""
    canon = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()


def open_sqlite(path, schema: str) -> sqlite3.Connection:
    """A cache file in WAL mode (safe for parallel jobs) with its table created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path, timeout=60)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute(schema)
    con.commit()
    return con


# ---------------------------------------------------------------- kept values


def stamp(paths) -> str:
    """sha256 over each file's path, size and mtime: changes when any of them is edited,
    added or removed (a touch without an edit changes it too; the value is only remade)."""
    lines = []
    for p in paths:
        st = Path(p).stat()
        lines.append(f"{p}\t{st.st_size}\t{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


class Kept:
    """One JSON value in the file `path`, valid while its stamp is the one it was kept with."""

    def __init__(self, path) -> None:
        self.path = Path(path)

    def get(self, key: str):
        """The value kept under `key`, or None (missing, another key, unreadable)."""
        try:
            kept = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(kept, dict) or kept.get("key") != key:
            return None
        return kept.get("value")

    def put(self, key: str, value) -> None:
        """Keep `value` under `key`; a place that cannot be written (a read-only install)
        only means it is made again next time."""
        # The value's own order is kept (a schema's keys are in its order, and params
        # built from it must compare equal run after run).
        data = json.dumps({"key": key, "value": value}).encode("utf-8")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, data)
        except OSError:
            pass

    def value(self, key: str, make):
        """The kept value, or make()'s, kept."""
        found = self.get(key)
        if found is None:
            found = make()
            self.put(key, found)
        return found


# ---------------------------------------------------------------- content-addressed files


class ContentFiles:
    """Files `<root>/<sha[:2]>/<sha><suffix>`, one value each, found by the sha256 of what
    made it; written once (an existing file is kept: the same key holds the same bytes)."""

    def __init__(self, root, suffix: str) -> None:
        self.root = Path(root)
        self.suffix = suffix

    def path(self, sha: str) -> Path:
        return self.root / sha[:2] / f"{sha}{self.suffix}"

    def read(self, sha: str) -> bytes | None:
        try:
            return self.path(sha).read_bytes()
        except OSError:
            return None

    def write(self, sha: str, data: bytes) -> bool:
        """Store the value unless it is there; True when a file was written."""
        p = self.path(sha)
        if p.exists():
            return False
        p.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(p, data)
        return True

    def drop(self, sha: str) -> None:
        """Remove a value found damaged, so that it is written again."""
        self.path(sha).unlink(missing_ok=True)
