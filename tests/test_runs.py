"""Run consistency: seed 002 (TF-IDF, mean off-diagonal), 003 (NCS), 004 (clamping)."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from themesim.errors import InputError
from themesim.metrics.sets.runs import (
    RUNS_LONG_COLUMNS,
    RUNS_TABLE_COLUMNS,
    clamp,
    ncs,
    run_consistency,
    run_similarity_embedding,
    run_similarity_tfidf,
    run_vectors,
    runs_matrix_long,
    runs_table,
)

# Hand-computed example. Off-diagonal pairs: (a,b) 0.8, (a,c) 0.2, (b,c) -0.4.
M3 = np.array([[1.0, 0.8, 0.2], [0.8, 1.0, -0.4], [0.2, -0.4, 1.0]])
NAMES = ["run1", "run2", "run3"]


def test_hand_computed_3x3():
    # consistency = (2 * (0.8 + 0.2 - 0.4)) / (3 * 2) = 1.2 / 6 = 0.2
    assert run_consistency(M3) == pytest.approx(0.2)
    # mean to others: run1 (0.8 + 0.2)/2 = 0.5, run2 (0.8 - 0.4)/2 = 0.2, run3 (0.2 - 0.4)/2 = -0.1
    # ncs = (mean + 1) / 2: 0.75, 0.6, 0.45
    np.testing.assert_allclose(ncs(M3), [0.75, 0.6, 0.45])


def test_consistency_ignores_the_diagonal():
    # Seed 002: 1/(N(N-1)) * sum_{i != j}; the diagonal may hold anything.
    M = M3.copy()
    np.fill_diagonal(M, [7.0, -3.0, 0.0])
    assert run_consistency(M) == pytest.approx(0.2)
    np.testing.assert_allclose(ncs(M), [0.75, 0.6, 0.45])
    # Not the mean of the full matrix (which would be (3 + 1.2) / 9).
    assert run_consistency(M3) != pytest.approx(M3.mean())


def test_consistency_uses_both_triangles_of_an_asymmetric_matrix():
    M = np.array([[1.0, 0.2], [0.6, 1.0]])
    assert run_consistency(M) == pytest.approx(0.4)
    np.testing.assert_allclose(ncs(M), [0.6, 0.8])


def test_fewer_than_two_runs_is_nan():
    assert math.isnan(run_consistency(np.ones((1, 1))))
    assert np.isnan(ncs(np.ones((1, 1)))).all()
    table = runs_table(["only"], np.ones((1, 1)), method="tfidf")
    assert table[RUNS_TABLE_COLUMNS[3:]].isna().all().all()


def test_identical_runs_are_fully_consistent():
    texts = ["Trust in staff\nWaiting times"] * 4
    M = run_similarity_tfidf(texts)
    assert run_consistency(M) == pytest.approx(1.0)
    np.testing.assert_allclose(ncs(M), 1.0)
    E = np.array([[0.6, 0.8, 0.0], [0.0, 0.6, 0.8]])
    M = run_similarity_embedding([E, E.copy(), E[::-1]])  # theme order does not matter
    assert run_consistency(M) == pytest.approx(1.0)


def test_tfidf_run_similarity():
    texts = ["trust staff", "trust staff", "parking fees"]
    M = run_similarity_tfidf(texts)
    assert M.shape == (3, 3)
    np.testing.assert_allclose(np.diag(M), 1.0)
    assert M[0, 1] == pytest.approx(1.0)
    assert M[0, 2] == pytest.approx(0.0) and M[1, 2] == pytest.approx(0.0)
    assert run_consistency(M) == pytest.approx(1 / 3)  # 2 * 1 / 6
    np.testing.assert_allclose(M, M.T)


def test_tfidf_run_with_no_terms_gets_a_unit_diagonal():
    M = run_similarity_tfidf(["trust staff", "!!!"])
    np.testing.assert_allclose(M, np.eye(2))
    with pytest.raises(InputError):
        run_similarity_tfidf(["!!!", "??"])


def test_embedding_run_similarity_is_cosine_of_mean_vectors():
    run_a = np.array([[1.0, 0.0], [0.0, 1.0]])  # mean (0.5, 0.5) -> (0.707, 0.707)
    run_b = np.array([[1.0, 0.0]])
    run_c = np.array([[-1.0, 0.0]])
    V = run_vectors([run_a, run_b, run_c])
    np.testing.assert_allclose(V[0], [2**-0.5, 2**-0.5])
    M = run_similarity_embedding([run_a, run_b, run_c])
    np.testing.assert_allclose(
        M,
        [[1, 2**-0.5, -(2**-0.5)], [2**-0.5, 1, -1], [-(2**-0.5), -1, 1]],
        atol=1e-12,
    )


def test_clamped_similarity_option():
    runs = [np.array([[1.0, 0.0]]), np.array([[-1.0, 0.0]]), np.array([[0.6, 0.8]])]
    raw = run_similarity_embedding(runs)
    clamped = run_similarity_embedding(runs, clamped=True)
    np.testing.assert_allclose(clamped, clamp(raw))
    assert raw[0, 1] == pytest.approx(-1.0) and clamped[0, 1] == 0.0
    assert clamped.min() >= 0 and clamped.max() <= 1
    # consistency: raw (-1 + 0.6 - 0.6) / 3 = -1/3; clamped (0 + 0.6 + 0) / 3 = 0.2
    assert run_consistency(raw) == pytest.approx(-1 / 3)
    assert run_consistency(clamped) == pytest.approx(0.2)
    np.testing.assert_array_equal(clamp([[-0.5, 1.5], [0.3, 1.0]]), [[0, 1], [0.3, 1.0]])


def test_run_vectors_reject_bad_runs():
    with pytest.raises(ValueError):
        run_vectors([np.zeros((0, 2))])
    with pytest.raises(ValueError):
        run_vectors([np.array([[1.0, 0.0], [-1.0, 0.0]])])  # mean is the zero vector
    with pytest.raises(ValueError):
        run_vectors([np.eye(2), np.eye(3)])
    with pytest.raises(ValueError):
        run_vectors([])


def test_runs_table():
    table = runs_table(NAMES, M3, method="minilm", group="g")
    assert list(table.columns) == RUNS_TABLE_COLUMNS
    assert table["method"].tolist() == ["minilm"] * 3 and table["group"].tolist() == ["g"] * 3
    assert table["run"].tolist() == NAMES
    np.testing.assert_allclose(table["ncs"], [0.75, 0.6, 0.45])
    np.testing.assert_allclose(table["mean_sim_to_others"], [0.5, 0.2, -0.1])
    np.testing.assert_allclose(table["max_sim_to_other"], [0.8, 0.8, 0.2])
    np.testing.assert_allclose(table["min_sim_to_other"], [0.2, -0.4, -0.4])


def test_runs_matrix_long_round_trips():
    long = runs_matrix_long(NAMES, M3, group="g")
    assert list(long.columns) == RUNS_LONG_COLUMNS
    assert len(long) == 9
    assert long.iloc[1].tolist() == ["g", "run1", "run2", 0.8]
    wide = long.pivot(index="run_a", columns="run_b", values="similarity")
    pd.testing.assert_frame_equal(
        wide.loc[NAMES, NAMES], pd.DataFrame(M3, index=NAMES, columns=NAMES), check_names=False
    )


def test_names_are_checked():
    with pytest.raises(ValueError):
        runs_table(["a", "b"], M3, method="x")
    with pytest.raises(ValueError):
        runs_matrix_long(["a", "a", "b"], M3)
    with pytest.raises(ValueError):
        run_consistency(np.ones((2, 3)))


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 8), st.integers(2, 6), st.integers(0, 2**32 - 1))
def test_ncs_in_unit_interval_for_any_cosine_matrix(n, d, seed):
    rng = np.random.default_rng(seed)
    runs = [rng.normal(size=(int(rng.integers(1, 5)), d)) for _ in range(n)]
    runs = [E / np.linalg.norm(E, axis=1, keepdims=True) for E in runs]
    try:
        M = run_similarity_embedding(runs)
    except ValueError:  # a run whose theme vectors cancel exactly: not a cosine matrix
        return
    values = ncs(M)
    assert ((values >= 0) & (values <= 1)).all()
    assert -1 <= run_consistency(M) <= 1


@settings(max_examples=100, deadline=None)
@given(
    st.integers(2, 6).flatmap(
        lambda n: arrays(np.float64, (n, n), elements=st.floats(-1, 1, allow_nan=False))
    )
)
def test_ncs_in_unit_interval_for_any_matrix_in_minus_one_one(M):
    values = ncs(M)
    assert ((values >= 0) & (values <= 1)).all()
    assert ((ncs(clamp(M)) >= 0.5) & (ncs(clamp(M)) <= 1)).all()
    # consistency is the mean of the per-run means, i.e. 2 * mean(ncs) - 1
    assert run_consistency(M) == pytest.approx(2 * values.mean() - 1, abs=1e-12)


# ---------------------------------------------------------------- run groups (the runs step)

# One theme per set, with hand-picked unit vectors: within g1 the cosines are r1-r2 0.6,
# r1-r3 0.0, r2-r3 0.8; within g2 s1-s2 0.8. x is in no group.
VECTORS = {
    "x": [0.0, 1.0],
    "r1": [1.0, 0.0],
    "r2": [0.6, 0.8],
    "r3": [0.0, 1.0],
    "s1": [1.0, 0.0],
    "s2": [0.8, 0.6],
}


def group_study(tmp_path):
    from themesim.embed.models import ModelSource
    from themesim.embed.vectors import write_embeddings
    from themesim.io.themes import read_themes_parquet
    from themesim.steps.ingest import ingest_themes

    themes, embeddings = {}, {}
    for s, v in VECTORS.items():
        csv = tmp_path / f"{s}.csv"
        csv.write_text(f"id,name,description\n{s}1,Theme of {s},About {s} and care\n")
        themes[s] = tmp_path / "themes" / f"{s}.parquet"
        ingest_themes(str(csv), str(themes[s]), set_name=s, template="{name}: {description}")
        embeddings[s] = tmp_path / "emb" / f"{s}.parquet"
        table = read_themes_parquet(themes[s])
        source = ModelSource("toy", str(tmp_path), None, None)
        write_embeddings(embeddings[s], table, np.array([v]), source, "toy")
    return themes, embeddings


def test_run_groups_give_separate_consistencies(tmp_path):
    from themesim.steps.runs import runs_tables

    themes, embeddings = group_study(tmp_path)
    groups = {"g1": ["r1", "r2", "r3"], "g2": ["s1", "s2"]}
    runs = [r for g in groups.values() for r in g]
    out, matrix = tmp_path / "runs.csv", tmp_path / "runs_matrix.parquet"
    runs_tables(
        method="toy",
        kind="sentence_transformer",
        groups=groups,
        themes={r: themes[r] for r in runs},
        embeddings={r: embeddings[r] for r in runs},
        clamp=False,
        out_table=out,
        out_matrix=matrix,
    )
    table = pd.read_csv(out)
    assert list(table.columns) == [*RUNS_TABLE_COLUMNS, "run_consistency"]
    assert table["group"].tolist() == ["g1", "g1", "g1", "g2", "g2"]
    assert table["run"].tolist() == runs and "x" not in set(table["run"])
    score = table.groupby("group", sort=False)["run_consistency"].unique()
    # g1: (0.6 + 0.0 + 0.8) / 3; g2: 0.8 (all five pooled would give 6.16 / 10 = 0.616)
    assert score["g1"].tolist() == pytest.approx([1.4 / 3], abs=1e-7)
    assert score["g2"].tolist() == pytest.approx([0.8], abs=1e-7)
    pooled = run_similarity_embedding([np.array([VECTORS[r]]) for r in runs])
    assert run_consistency(pooled) == pytest.approx(0.616)
    # ncs = (mean to the others of the group + 1) / 2: r1 0.3, r2 0.7, r3 0.4, s1 = s2 = 0.8
    np.testing.assert_allclose(table["ncs"], [0.65, 0.85, 0.7, 0.9, 0.9], atol=1e-7)
    long = pd.read_parquet(matrix)
    assert list(long.columns) == RUNS_LONG_COLUMNS
    assert long.groupby("group", sort=False).size().to_dict() == {"g1": 9, "g2": 4}
    cell = long[(long.run_a == "s1") & (long.run_b == "s2")]
    assert cell["group"].tolist() == ["g2"] and cell["similarity"].iloc[0] == pytest.approx(0.8)
    assert not ((long.run_a == "r1") & (long.run_b == "s1")).any()  # across groups: never


def test_tfidf_is_fitted_within_each_group(tmp_path):
    """A group's TF-IDF vocabulary and IDF come from its own runs only."""
    from themesim.io.themes import read_themes_parquet
    from themesim.steps.runs import runs_tables

    themes, _ = group_study(tmp_path)
    groups = {"g1": ["r1", "r2", "r3"], "g2": ["s1", "s2"]}
    out, matrix = tmp_path / "runs.csv", tmp_path / "runs_matrix.parquet"
    runs_tables(
        method="tfidf", kind="tfidf", groups=groups, themes=themes, embeddings={},
        clamp=False, out_table=out, out_matrix=matrix,
    )  # fmt: skip
    texts = ["\n".join(read_themes_parquet(themes[r])["text"]) for r in groups["g2"]]
    expected = run_similarity_tfidf(texts)[0, 1]
    table = pd.read_csv(out)
    assert table[table.group == "g2"]["run_consistency"].iloc[0] == pytest.approx(expected)
    assert 0 < expected < 1


def test_run_consistency_plot_draws_one_panel_per_group(tmp_path):
    from themesim.report.plots.runs import runs_groups_figure

    fig = runs_groups_figure(
        [
            {"group": "g1", "names": ["r1", "r2"], "M": np.array([[1, 0.6], [0.6, 1]]),
             "ncs": [0.8, 0.8], "score": 0.6},
            {"group": "g2", "names": ["s1", "s2", "s3"], "M": np.eye(3), "score": 0.0},
        ],
        title="m",
    )  # fmt: skip
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == [
        "g1: run consistency = 0.600",
        "g2: run consistency = 0.000",
    ]
    assert [t.get_text() for t in panels[0].get_yticklabels()] == ["r1 (NCS 0.80)", "r2 (NCS 0.80)"]
    assert len(panels[1].get_xticklabels()) == 3
