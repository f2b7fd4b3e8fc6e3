"""The content-addressed embedding cache and the batching that makes it exact (real MiniLM)."""

import numpy as np
import pytest
from helpers import make_study, snakemake, write_config

from themesim.embed.cache import EmbeddingCache, cache_dir, key_name, model_key
from themesim.embed.encode import MINILM, embed_texts, encode, resolve_model, text_sha256

TEXTS = [
    "Caring while working: fitting shifts around a parent",
    "Own health suffers: carers lose sleep",
    "Money worries: the costs of care strain the budget",
    "Guilt",
    "Financial strain: paying for care puts pressure on family finances",
    "Gardening as escape: tending plants offers a break from the daily routine of care",
]


@pytest.fixture(scope="module")
def minilm():
    return resolve_model(MINILM)


def test_vector_does_not_depend_on_batch_mates(minilm):
    # Plain padded batches change the last bits with the batch (the cache would then not be
    # exact); equal-token-length batches must not.
    together = encode(TEXTS, minilm, batch_size=4)
    alone = np.stack([encode([t], minilm)[0] for t in TEXTS])
    reordered = encode(TEXTS[::-1] + ["an extra text of another length entirely"], minilm)
    assert together.dtype == np.float32 and together.shape == (6, 384)
    assert together.tobytes() == alone.tobytes()
    assert together.tobytes() == reordered[:6][::-1].tobytes()


def test_hits_misses_and_identical_vectors(tmp_path, minilm):
    plain, stats = embed_texts(TEXTS[:4], minilm, cache_root=None)
    assert (stats.encoded, stats.cached) == (4, 0)

    first, stats = embed_texts(TEXTS[:4] + TEXTS[:1], minilm, cache_root=tmp_path)
    assert (stats.texts, stats.unique, stats.encoded, stats.cached) == (5, 4, 4, 0)
    assert first[:4].tobytes() == plain.tobytes() and first[4].tobytes() == first[0].tobytes()

    # A new set sharing two texts with the first: only its two new texts are encoded.
    new_set = [TEXTS[1], TEXTS[4], TEXTS[3], TEXTS[5]]
    second, stats = embed_texts(new_set, minilm, cache_root=tmp_path)
    assert (stats.encoded, stats.cached) == (2, 2)
    fresh, _ = embed_texts(new_set, minilm, cache_root=None)
    assert second.tobytes() == fresh.tobytes()

    again, stats = embed_texts(TEXTS, minilm, cache_root=tmp_path)
    assert (stats.encoded, stats.cached) == (0, 6)
    folder = tmp_path / key_name(model_key(minilm))
    files = sorted(p.stem for p in folder.glob("*/*.npy"))
    assert files == sorted(text_sha256(t) for t in TEXTS)
    sha = text_sha256(TEXTS[0])
    assert np.load(folder / sha[:2] / f"{sha}.npy").tobytes() == plain[0].tobytes()
    assert not list(folder.rglob(".tmp-*"))  # nothing half-written


def test_key_change_misses(tmp_path, minilm):
    embed_texts(TEXTS[:3], minilm, cache_root=tmp_path)
    copy = resolve_model("my-minilm-copy", path=minilm.path)  # another model id, a folder key
    _, stats = embed_texts(TEXTS[:3], copy, cache_root=tmp_path)
    assert (stats.encoded, stats.cached) == (3, 0)
    assert model_key(copy)["weights"].startswith("folder-sha256:")
    assert model_key(minilm, dtype="float16") != model_key(minilm)
    assert model_key(minilm, device="cuda:1") == model_key(minilm, device="cuda")
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 2
    _, stats = embed_texts(TEXTS[:3], copy, cache_root=tmp_path)
    assert (stats.encoded, stats.cached) == (0, 3)


def test_unreadable_entry_is_a_miss_and_is_rewritten(tmp_path, minilm):
    vec, _ = embed_texts(TEXTS[:1], minilm, cache_root=tmp_path)
    cache = EmbeddingCache(tmp_path, model_key(minilm))
    sha = text_sha256(TEXTS[0])
    cache._path(sha).write_bytes(b"\x93NUMPY truncated")
    assert cache.get([sha]) == {}
    again, stats = embed_texts(TEXTS[:1], minilm, cache_root=tmp_path)
    assert (stats.encoded, stats.cached) == (1, 0)
    cache._path(sha).unlink()
    assert cache.put({sha: again[0]}) == 1 and cache.get([sha])[sha].tobytes() == vec[0].tobytes()


def test_cache_folder_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("THEMESIM_EMBED_CACHE", str(tmp_path / "env"))
    assert cache_dir(None) == tmp_path / "env"
    assert cache_dir(False) is None
    assert cache_dir(str(tmp_path / "x")) == tmp_path / "x"
    monkeypatch.delenv("THEMESIM_EMBED_CACHE")
    assert str(cache_dir(None)).endswith(".cache/themesim/embeddings")


def test_workflow_new_set_encodes_only_its_new_texts(tmp_path):
    root = make_study(tmp_path / "study")
    (root / "data" / "llm3.csv").write_text(
        "name,description\n"
        "Financial strain,Paying for care puts pressure on family finances\n"  # as in llm.yaml
        "Respite,Short breaks let carers recover\n"
    )
    sets = [{"path": "data/human.csv"}, {"path": "data/llm.yaml", "name": "llm"}]
    cache = tmp_path / "cache"
    minilm = {"methods": {"minilm": {"kind": "sentence_transformer", "thresholds": [0.5]}}}
    write_config(root, [0.5], theme_sets=sets, embedding_cache=str(cache), **minilm)
    snakemake(root, "--cores", "2", "results/embeddings/minilm/llm.parquet")
    log = (root / "logs/embed/minilm/llm.log").read_text()
    assert "3 texts (3 unique): 3 encoded, 0 from the cache" in log

    sets.append({"path": "data/llm3.csv"})
    write_config(root, [0.5], theme_sets=sets, embedding_cache=str(cache), **minilm)
    snakemake(root, "--cores", "2", "results/embeddings/minilm/llm3.parquet")
    log = (root / "logs/embed/minilm/llm3.log").read_text()
    assert "2 texts (2 unique): 1 encoded, 1 from the cache" in log
