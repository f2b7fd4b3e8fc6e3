"""The content-addressed embedding cache and the batching that makes it exact (real MiniLM)."""

import numpy as np
import pytest
from helpers import make_study, snakemake, write_config

from themesim.embed.cache import EmbeddingCache, cache_dir, key_name, model_key
from themesim.embed.device import batch_rows
from themesim.embed.encode import embed_texts, encode
from themesim.embed.models import MINILM, resolve_model
from themesim.embed.vectors import text_sha256

ROWS = batch_rows(None)  # the rows per forward pass embed_texts uses by default

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


# One-token texts share a token length: "work" alone, then among others of its length.
WORDS = ["work", "care", "money", "family", "sleep", "guilt", "shifts", "time", "help"]


@pytest.mark.parametrize("threads", [1, 2])
def test_one_word_vector_does_not_depend_on_its_batch(minilm, threads):
    """On 2 threads a one-text batch gave "work" other last bits (1.2e-7) than a batch of
    nine: the keyword's cached vector depended on which job encoded it first."""
    alone = encode(WORDS[:1], minilm, threads=threads)
    for n in (2, 3, 5, 9):
        together = encode(WORDS[:n], minilm, threads=threads)
        assert together[0].tobytes() == alone[0].tobytes(), n
    big = encode(WORDS, minilm, batch_size=64, threads=threads)
    assert big[0].tobytes() == alone[0].tobytes()


def _set(root, name, rows):
    """A theme parquet as ingest writes it, from (name, description) rows."""
    from themesim.io.themes import read_theme_file, write_themes_parquet

    csv = root / f"{name}.csv"
    csv.write_text("name,description\n" + "".join(f"{n},{d}\n" for n, d in rows))
    path = root / f"{name}.parquet"
    write_themes_parquet(read_theme_file(csv), path)
    return str(path)


def _embed_files(root, themes, cache, segments=None):
    from themesim.steps.embed import embed_method
    from themesim.steps.job import Job

    out = {
        "embeddings": {s: str(root / f"e_{s}.parquet") for s in themes},
        "keywords": {s: str(root / f"k_{s}.parquet") for s in themes},
        "nulls": {s: str(root / f"n_{s}.parquet") for s in themes},
    }
    spec = {"model": MINILM, "batch_size": 64}
    embed_method(
        Job(
            input={"themes": themes},
            params={"method": "minilm", "spec": spec, "cache": cache, "nulls": out["nulls"],
                    "pool": 6, "seed": 1, "top_k": 3},
            output={k: list(out[k].values()) for k in ("embeddings", "keywords")},
            threads=2,
        )
    )  # fmt: skip
    return out


def test_stored_vectors_do_not_depend_on_job_order(tmp_path):
    """Two sets share the keyword "work". Whether the other set's job filled the cache first
    or not, and whether the sets share one job, set B's files hold the same bytes."""
    data = tmp_path / "data"
    data.mkdir()
    a = _set(data, "a", [("Work", "work work work stress"), ("Care", "care of a parent")])
    b = _set(data, "b", [("Work", "work and money work"), ("Sleep", "lost sleep and guilt")])
    runs = {}
    # B alone, with a fresh cache.
    runs["alone"] = _embed_files(tmp_path / "alone", {"b": b}, tmp_path / "c1")
    # A first (it stores "work" in the cache), then B.
    _embed_files(tmp_path / "afirst", {"a": a}, tmp_path / "c2")
    runs["after_a"] = _embed_files(tmp_path / "after_a", {"b": b}, tmp_path / "c2")
    # One job for both sets, in either order, no cache.
    runs["both"] = _embed_files(tmp_path / "both", {"a": a, "b": b}, False)
    runs["both_rev"] = _embed_files(tmp_path / "both_rev", {"b": b, "a": a}, False)
    for kind in ("embeddings", "keywords", "nulls"):
        want = (tmp_path / "alone" / f"{kind[0]}_b.parquet").read_bytes()
        for name in ("after_a", "both", "both_rev"):
            assert (tmp_path / name / f"{kind[0]}_b.parquet").read_bytes() == want, (kind, name)
    from themesim.embed.vectors import read_vector_table

    cols, emb, _ = read_vector_table(tmp_path / "alone" / "k_b.parquet")
    assert "work" in cols["keyword"].tolist() and emb.shape[1] == 384


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
    folder = tmp_path / key_name(model_key(minilm, rows=ROWS))
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
    assert model_key(copy, rows=ROWS)["weights"].startswith("folder-sha256:")
    assert model_key(minilm, rows=ROWS, dtype="float16") != model_key(minilm, rows=ROWS)
    assert model_key(minilm, rows=ROWS, device="cuda:1") == model_key(
        minilm, rows=ROWS, device="cuda"
    )
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 2
    _, stats = embed_texts(TEXTS[:3], copy, cache_root=tmp_path)
    assert (stats.encoded, stats.cached) == (0, 3)


def test_unreadable_entry_is_a_miss_and_is_rewritten(tmp_path, minilm):
    vec, _ = embed_texts(TEXTS[:1], minilm, cache_root=tmp_path)
    cache = EmbeddingCache(tmp_path, model_key(minilm, rows=ROWS))
    sha = text_sha256(TEXTS[0])
    cache._path(sha).write_bytes(b"\x93NUMPY truncated")
    assert cache.get([sha]) == {}
    again, stats = embed_texts(TEXTS[:1], minilm, cache_root=tmp_path)
    assert (stats.encoded, stats.cached) == (1, 0)
    cache._path(sha).unlink()
    assert cache.put({sha: again[0]}) == 1 and cache.get([sha])[sha].tobytes() == vec[0].tobytes()


def test_a_vector_file_with_other_numbers_fails_its_checksum(tmp_path, minilm):
    """Regression (issue 24.10): a cached .npy with the right shape and dtype but other numbers
    was used silently (and changed comparisons.csv); a truncated one was re-encoded but left
    on disk. Both now fail the file's checksum: a miss, removed and written again."""
    texts = TEXTS[:2]
    vec, _ = embed_texts(texts, minilm, cache_root=tmp_path)
    cache = EmbeddingCache(tmp_path, model_key(minilm, rows=ROWS))
    sha0, sha1 = (text_sha256(t) for t in texts)
    np.save(cache._path(sha0), -vec[0])  # right shape and dtype, other numbers
    good = cache._path(sha1).read_bytes()
    cache._path(sha1).write_bytes(good[: len(good) // 2])  # truncated
    assert cache.get([sha0, sha1]) == {}
    assert not cache._path(sha0).exists() and not cache._path(sha1).exists()
    again, stats = embed_texts(texts, minilm, cache_root=tmp_path)
    assert (stats.encoded, stats.cached) == (2, 0) and again.tobytes() == vec.tobytes()
    assert cache._path(sha1).read_bytes() == good  # written again, the same bytes
    # Another text's file under this text's name fails too (the checksum names the text).
    cache._path(sha0).write_bytes(good)
    assert list(cache.get([sha0, sha1])) == [sha1]


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
    first = texts_of(root / "results")
    log = (root / "logs/embed/minilm.log").read_text()
    n = len(first)
    assert f"{n} texts ({n} unique): {n} encoded, 0 from the cache" in log

    sets.append({"path": "data/llm3.csv"})
    write_config(root, [0.5], theme_sets=sets, embedding_cache=str(cache), **minilm)
    snakemake(root, "--cores", "2", "results/embeddings/minilm/llm3.parquet")
    second = texts_of(root / "results")
    new = second - first
    # The new set's texts: one of its themes is llm's, the other and its salad pool are new.
    assert "Respite: Short breaks let carers recover" in new
    assert "Financial strain: Paying for care puts pressure on family finances" not in new
    n = len(second)
    log = (root / "logs/embed/minilm.log").read_text()
    assert f"{n} texts ({n} unique): {len(new)} encoded, {n - len(new)} from the cache" in log


def texts_of(results):
    """Every distinct text the embedding job of minilm wrote a vector for."""
    import pandas as pd

    out = set()
    for folder, col in (("embeddings", "text"), ("keyword_embeddings", "keyword")):
        for f in (results / folder / "minilm").glob("*.parquet"):
            out |= set(pd.read_parquet(f, columns=[col])[col])
    for f in (results / "nulls" / "minilm").glob("*.parquet"):
        out |= set(pd.read_parquet(f, columns=["text"])["text"])
    seg = results / "segment_embeddings" / "minilm.parquet"
    if seg.exists():
        out |= set(pd.read_parquet(results / "transcripts" / "segments.parquet")["text"])
    return out
