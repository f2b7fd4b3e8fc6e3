"""What the metrics step computes once per comparison or per set and reuses gives the same
numbers as computing it afresh (the metric tables must not change by a byte)."""

import numpy as np
import pandas as pd
from pandas.testing import assert_frame_equal

from themesim.embed.texts import word_salad_pool
from themesim.embed.vectors import write_vector_table
from themesim.io.themes import read_theme_file
from themesim.kinds import get as get_kind
from themesim.metrics.comparison import Settings, comparison_rows, sweep_rows, theme_rows
from themesim.similarity import cosine, tfidf


def unit(rng, n, d=16):
    x = rng.normal(size=(n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def case(seed=0, n_a=6, n_b=8):
    rng = np.random.default_rng(seed)
    A, B, P = unit(rng, n_a), unit(rng, n_b), unit(rng, 60)
    a = pd.DataFrame({"theme_id": [f"A{i}" for i in range(n_a)], "name": list("abcdef")[:n_a]})
    b = pd.DataFrame({"theme_id": [f"B{j}" for j in range(n_b)], "name": list("ghijklmn")[:n_b]})
    return A @ B.T, A @ A.T, B @ B.T, A @ P.T, a, b


def test_theme_rows_reusing_comparison_parts_equal_fresh_ones():
    S, Wa, Wb, pool, a, b = case()
    st = Settings(thresholds=[0.3], bootstrap={"n": 50, "seed": 0})
    _, extra = comparison_rows(S, st, W_a=Wa, W_b=Wb, null_pool=pool)
    assert extra["null"] is not None and {"within_a", "within_b", "sym"} <= set(extra["parts"])
    fresh = theme_rows(S, st, a, b, W_a=Wa, W_b=Wb, null_pool=pool)
    reused = theme_rows(S, st, a, b, W_a=Wa, W_b=Wb, null_pool=pool, reused=extra)
    assert_frame_equal(reused, fresh, check_exact=True)
    assert fresh["null_p"].notna().sum() == len(a)  # the null columns are really there


def test_sweep_reusing_the_plan_equals_a_fresh_plan():
    S, *_ = case(1)
    st = Settings(thresholds=[0.3])
    grid = [0.1, 0.2, 0.3, 0.4]
    _, extra = sweep_rows(S, st, st.thresholds)
    fresh, _ = sweep_rows(S, st, grid)
    reused, _ = sweep_rows(S, st, grid, plan=extra["plan"])
    assert_frame_equal(reused, fresh, check_exact=True)
    assert fresh["ot_total_mass"].iloc[0] > 0


def test_tfidf_null_pool_made_once_per_b_equals_the_direct_formula():
    a = read_theme_file("data/demo/themes/human.csv")
    b = read_theme_file("data/demo/themes/qwen_run2.csv")
    kind = get_kind("tfidf")
    seen = []

    def scale(M, W):
        seen.append(W.copy())
        return M

    first = kind.null_pool(a, b, None, 30, 0, scale, None, spec={"kind": "tfidf"})
    again = kind.null_pool(a, b, None, 30, 0, scale, None, spec={"kind": "tfidf"})
    texts, _ = word_salad_pool(b["text"].tolist(), 30, 0)
    n_b = len(b)  # 7: 30 asked gives ceil(30 / 7) = 5 whole salad sets, 35 texts
    chunks = [texts[i : i + n_b] for i in range(0, 35, n_b)]
    direct = np.hstack([tfidf(a["text"].tolist(), x) for x in chunks])
    assert first.shape == (len(a), 35)
    assert np.array_equal(first, direct) and np.array_equal(again, direct)
    for W, x in zip(seen, chunks + chunks, strict=True):  # each salad set's own matrix
        assert np.array_equal(W, tfidf(x, None))


def test_embedded_null_pool_follows_a_rewritten_file(tmp_path):
    rng = np.random.default_rng(2)
    emb_a, null_1, null_2 = unit(rng, 4), unit(rng, 20), unit(rng, 20)
    path = tmp_path / "null.parquet"
    kind = get_kind("sentence_transformer")
    b = pd.DataFrame({"theme_id": [f"B{j}" for j in range(5)]})  # 20 texts: 4 salad sets
    seen = []

    def scale(M, W):
        seen.append(W)
        return M

    def pool(null):
        write_vector_table(path, {"text": [f"t{i}" for i in range(20)]}, null, {})
        return kind.null_pool(None, b, path, 20, 0, scale, emb_a)

    M1 = pool(null_1)
    assert np.allclose(M1, emb_a @ null_1.T, atol=1e-6)
    assert [W.shape for W in seen] == [(5, 5)] * 4 and np.allclose(np.diag(seen[0]), 1.0)
    M2 = pool(null_2)  # same path, new content: read again, not served from the cache
    assert np.array_equal(M2, cosine(emb_a, null_2.astype(np.float32)))
