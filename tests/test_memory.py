"""Very large sets: the matrix size checked against memory first, and matrices built,
written and read in blocks (issue 24.6)."""

import numpy as np
import pytest

from themesim import memory, similarity
from themesim.errors import InputError
from themesim.kinds import tfidf as tfidf_kind
from themesim.memory import BASE_BYTES, BYTES_PER_CELL, available_bytes, matrix_bytes


def theme_csv(path, n):
    rows = [f"theme {i},words {i} and {i % 7} and {i % 13}" for i in range(n)]
    path.write_text("name,description\n" + "\n".join(rows) + "\n")
    return path


def test_available_memory_is_known_on_linux():
    have = available_bytes()
    assert have is not None and 0 < have < 1 << 50
    assert matrix_bytes(50_000, 50_000) == BASE_BYTES + BYTES_PER_CELL * 2_500_000_000


def test_a_set_whose_within_set_matrix_cannot_fit_stops_its_ingest(tmp_path, monkeypatch):
    """Regression (issue 24.6): a 50,000-theme set reached a 50k x 50k float64 matrix in
    scikit-learn and died with numpy's _ArrayMemoryError (18.6 GiB). The ingest job now
    stops first, saying what the matrix needs and what is available."""
    from themesim.steps.ingest import ingest_themes

    src = theme_csv(tmp_path / "big.csv", 300)
    have = BASE_BYTES + BYTES_PER_CELL * 200 * 200  # room for 200 x 200, not 300 x 300
    monkeypatch.setattr(memory, "available_bytes", lambda: have)
    out = tmp_path / "big.parquet"
    with pytest.raises(InputError) as err:
        ingest_themes(src, out, set_name="big", template="{name}: {description}", within=True)
    assert str(err.value) == (
        f"{src} (set big): its within-set matrix of 300 x 300 themes needs about 0.5 GiB of "
        "memory (48 bytes a cell), and 0.5 GiB is available. Compare smaller sets (split "
        "this one, or take a .qdpx code book at `level: top`), or run where more memory is "
        "free; THEMESIM_MEMORY_CHECK=off skips this check"
    )
    assert not out.exists()
    # Without a within-set matrix (judge, precomputed), or with the check off, it is read.
    ingest_themes(src, out, set_name="big", template="{name}: {description}")
    monkeypatch.setenv("THEMESIM_MEMORY_CHECK", "off")
    ingest_themes(src, out, set_name="big", template="{name}: {description}", within=True)


def test_the_similarity_job_checks_its_largest_matrix_before_building_any(tmp_path, monkeypatch):
    from themesim.steps.ingest import ingest_themes
    from themesim.steps.job import Job
    from themesim.steps.similarity import similarity_pairs

    themes = {}
    for name, n in (("a", 40), ("b", 300)):
        themes[name] = str(tmp_path / f"{name}.parquet")
        ingest_themes(
            theme_csv(tmp_path / f"{name}.csv", n),
            themes[name],
            set_name=name,
            template="{name}: {description}",
        )
    monkeypatch.setattr(memory, "available_bytes", lambda: BASE_BYTES + BYTES_PER_CELL * 20_000)
    # where the tfidf kind looks it up
    monkeypatch.setattr(tfidf_kind, "tfidf", lambda *a, **k: pytest.fail("a matrix was built"))
    pairs = [("a", "b"), ("a", "a"), ("b", "b")]
    with pytest.raises(
        InputError,
        match=r"^tfidf similarity: the within-set matrix of b of "
        r"300 x 300 themes needs about",
    ):
        similarity_pairs(
            Job(
                input={"themes": themes},
                params={
                    "method": "tfidf",
                    "spec": {"kind": "tfidf"},
                    "pairs": pairs,
                    "files": [str(tmp_path / f"{a}__vs__{b}.parquet") for a, b in pairs],
                },
                output={"manifest": str(tmp_path / "manifest.csv")},
            )
        )


def test_blocked_tfidf_gives_the_same_bits(monkeypatch):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(200)]
    texts = [" ".join(rng.choice(words, 6)) for _ in range(120)]
    X = TfidfVectorizer().fit_transform(texts)
    whole = similarity.snap_unit(cosine_similarity(X[:70], X[70:]))
    monkeypatch.setattr(similarity, "BLOCK_CELLS", 100)  # 2 rows of 50 at a time
    assert similarity._blocked_cosine(X[:70], X[70:]).tobytes() == whole.tobytes()
    within = similarity.tfidf(texts, None)
    assert within.shape == (120, 120) and (np.diag(within) == 1.0).all()


def test_a_file_written_in_row_groups_has_the_bytes_of_one_written_whole(tmp_path, monkeypatch):
    """write_similarity streams row groups of ROW_GROUP rows, pyarrow's default: the same
    bytes as the whole table at once; read_similarity fills the matrix group by group."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.setattr(similarity, "ROW_GROUP", 1000)
    S = np.random.default_rng(4).random((70, 40))
    a, b = [f"A{i}" for i in range(70)], [f"B{j}" for j in range(40)]
    long = similarity.to_long(S, a, b)
    whole = pa.table(
        {
            "a_id": pa.array(long["a_id"].tolist(), pa.string()),
            "b_id": pa.array(long["b_id"].tolist(), pa.string()),
            "similarity": pa.array(long["similarity"].to_numpy(), pa.float64()),
        }
    ).replace_schema_metadata({similarity.SIMILARITY_META_KEY: json.dumps({"m": 1})})
    pq.write_table(whole, tmp_path / "whole.parquet", row_group_size=1000)
    similarity.write_similarity(tmp_path / "blocks.parquet", S, a, b, {"m": 1})
    blocks = (tmp_path / "blocks.parquet").read_bytes()
    assert blocks == (tmp_path / "whole.parquet").read_bytes()
    assert pq.ParquetFile(tmp_path / "blocks.parquet").num_row_groups == 3
    back = similarity.read_similarity(tmp_path / "blocks.parquet", a[::-1], b[5:])
    assert back.tobytes() == S[::-1, 5:].tobytes()
    with pytest.raises(InputError, match=r"does not hold every theme pair \(no pair of \['X'\]"):
        similarity.read_similarity(tmp_path / "blocks.parquet", a + ["X"], b)


def test_a_large_file_is_verified_and_read_from_disk(tmp_path, monkeypatch):
    from themesim.io.manifest import write_manifest

    S = np.random.default_rng(5).random((30, 20))
    a, b = [f"A{i}" for i in range(30)], [f"B{j}" for j in range(20)]
    path = tmp_path / "a__vs__b.parquet"
    similarity.write_similarity(path, S, a, b, {})
    write_manifest([path], tmp_path / "manifest.csv")
    monkeypatch.setattr(similarity, "STREAM_ABOVE", 100)
    assert similarity.read_similarity(path, a, b).tobytes() == S.tobytes()
    path.write_bytes(path.read_bytes() + b"\0")
    with pytest.raises(InputError, match="has changed since its job wrote it"):
        similarity.read_similarity(path, a, b)


def test_amount_reads_sizes_in_binary_units():
    from themesim.memory import amount

    assert amount(12) == "12 bytes"
    assert amount(1023) == "1023 bytes"
    assert amount(1638) == "1.6 KiB"  # 1638 / 1024 = 1.5996
    assert amount(200 << 20) == "200.0 MiB"
    assert amount(int(2.3 * 2**30)) == "2.3 GiB"
    assert amount(1024 << 40) == "1,024.0 TiB"
