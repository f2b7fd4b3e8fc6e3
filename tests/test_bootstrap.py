import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from themesim.metrics import bootstrap
from themesim.metrics.bootstrap import CI_COLUMNS, CI_METRICS, bootstrap_ci, bootstrap_table
from themesim.metrics.coverage import matches, max_cardinality_count, score
from themesim.metrics.distinctiveness import GAP_COLUMNS, gap_summary


def diagonal_ish(n: int, seed: int) -> np.ndarray:
    """Each A_i has a true partner B_i (0.6-0.9) among unrelated themes (0.1-0.55)."""
    rng = np.random.default_rng(seed)
    S = rng.uniform(0.1, 0.55, size=(n, n))
    S[np.arange(n), np.arange(n)] = rng.uniform(0.6, 0.9, size=n)
    return S


def point_estimates(S, thresholds, op="ge", gamma=0.15) -> pd.DataFrame:
    s = score(S, thresholds, op).drop(columns=["n_a", "n_b"])
    g = gap_summary(S, thresholds, op, gamma).drop(columns="threshold")
    return pd.concat([s, g], axis=1)


# --- the fast internals reproduce score() and gap_summary() exactly -----------------------

matrices = st.builds(
    lambda seed, n, m, digits: np.round(
        np.random.default_rng(seed).uniform(-1, 1, size=(n, m)), digits
    ),
    st.integers(0, 2**32 - 1),
    st.integers(1, 7),
    st.integers(1, 7),
    st.sampled_from([1, 2, 15]),  # coarse values give ties
)
ops = st.sampled_from(["ge", "gt"])
grids = st.lists(st.floats(-1, 1, allow_nan=False).map(lambda x: round(x, 1)), min_size=1)


@settings(max_examples=100, deadline=None)
@given(matrices, grids, ops)
def test_incremental_matching_counts(S, t, op):
    t = np.array(t)
    want = [max_cardinality_count(matches(S, x, op)) for x in t]
    assert bootstrap._maxcard_counts(S, t, op).tolist() == want


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 9))
def test_top_quartiles_bit_identical_to_numpy(seed, m):
    rng = np.random.default_rng(seed)
    v = np.sort(np.round(rng.uniform(-1, 1, size=(3, m)), 2), axis=1)
    counts = rng.integers(0, m + 1, size=(3, 4))
    got = bootstrap._top_quartiles(v, counts)
    for b in range(3):
        for i, k in enumerate(counts[b]):
            want = np.percentile(v[b, m - k :], [0, 25, 50, 75, 100]) if k else np.full(5, np.nan)
            np.testing.assert_array_equal(got[b, i], want)


@pytest.mark.parametrize("kuhn_cells", [10_000, 0])  # both matching paths
@settings(max_examples=30, deadline=None)
@given(S=matrices, op=ops, seed=st.integers(0, 2**32 - 1), gamma=st.floats(0, 0.5))
def test_batches_equal_score_and_gap_summary(kuhn_cells, S, op, seed, gamma):
    t = np.array([-0.5, 0.0, 0.3, 0.5, 0.7])
    rows, cols = bootstrap._resample_indices(*S.shape, 4, seed)
    Sb = S[rows[:, :, None], cols[:, None, :]]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bootstrap, "_KUHN_CELLS", kuhn_cells)
        got_score = bootstrap._score_batch(Sb, t, op)
    got_gap = bootstrap._gap_batch(S, rows, cols, t, op, gamma)
    for b in range(4):
        want = score(Sb[b], t, op).drop(columns=["threshold", "n_a", "n_b"]).to_numpy(float)
        np.testing.assert_array_equal(got_score[b], want)
        # Gaps: judged themes keep their copies, candidates are the distinct themes drawn.
        a = gap_summary(S[np.ix_(rows[b], np.unique(cols[b]))], t, op, gamma)
        bb = gap_summary(S[np.ix_(np.unique(rows[b]), cols[b])], t, op, gamma)
        want_gap = np.hstack([a[GAP_COLUMNS[:10]].to_numpy(), bb[GAP_COLUMNS[10:]].to_numpy()])
        np.testing.assert_array_equal(got_gap[b], want_gap)


def test_table_uses_the_same_resamples_as_bootstrap_ci():
    S = diagonal_ish(6, 1)
    t = [0.5, 0.7]

    def stat(Sb):
        s = score(Sb, t)
        return {f"{c}@{i}": float(s.loc[i, c]) for i in range(2) for c in ("f1", "maxcard_f1")}

    slow = bootstrap_ci(S, stat, n_boot=40, seed=3)
    fast = bootstrap_table(S, t, n_boot=40, seed=3)
    for i in range(2):
        for c in ("f1", "maxcard_f1"):
            assert slow[f"{c}@{i}"] == (fast.loc[i, f"{c}_ci_low"], fast.loc[i, f"{c}_ci_high"])


# --- behaviour ------------------------------------------------------------------------


def test_columns():
    tab = bootstrap_table(diagonal_ish(5, 0), [0.5, 0.7], n_boot=20)
    assert list(tab.columns) == ["threshold"] + CI_COLUMNS
    assert tab["threshold"].tolist() == [0.5, 0.7]
    assert "n_a" not in CI_METRICS and "hungarian_f1" in CI_METRICS
    assert "unique_match_rate_b" in CI_METRICS
    assert (tab.filter(like="_ci_low").to_numpy() <= tab.filter(like="_ci_high").to_numpy()).all()


def test_same_seed_same_table_other_seed_differs():
    S = diagonal_ish(8, 2)
    a = bootstrap_table(S, [0.6], n_boot=200, seed=7)
    pd.testing.assert_frame_equal(a, bootstrap_table(S, [0.6], n_boot=200, seed=7))
    b = bootstrap_table(S, [0.6], n_boot=200, seed=8)
    assert not a.equals(b)
    stat = lambda Sb: {"m": float(Sb.mean())}  # noqa: E731
    assert bootstrap_ci(S, stat, seed=1) == bootstrap_ci(S, stat, seed=1)
    assert bootstrap_ci(S, stat, seed=1) != bootstrap_ci(S, stat, seed=2)


def test_intervals_contain_the_estimate():
    # Only for metrics that are not structurally biased by resampling both sets: pair-level
    # means and quartiles. Coverage and one-to-one counts are biased down (a theme whose
    # partner is not drawn loses its match; bootstrap.py's docstring), and so are the
    # max-similarity means (a max over fewer distinct candidates).
    S = diagonal_ish(12, 5)
    t = [0.5, 0.7]
    tab = bootstrap_table(S, t, n_boot=1000, seed=0)
    est = point_estimates(S, t)
    checked = [
        "n_match_pairs",
        "raza_jaccard",
        "matched_sim_q1",
        "matched_sim_median",
        "matched_sim_q3",
        "gap_abs_q1_a",
        "gap_abs_median_a",
        "gap_abs_q3_a",
        "gap_abs_q1_b",
        "gap_abs_median_b",
        "gap_abs_q3_b",
    ]
    for i in range(len(t)):
        for m in checked:
            lo, hi = tab.loc[i, f"{m}_ci_low"], tab.loc[i, f"{m}_ci_high"]
            assert lo <= est.loc[i, m] <= hi, (t[i], m, lo, est.loc[i, m], hi)


def test_intervals_shrink_as_sets_grow():
    widths = []
    for n in (10, 80):
        tab = bootstrap_table(diagonal_ish(n, 11), [0.6], n_boot=300, seed=0)
        widths.append(
            {
                m: tab.loc[0, f"{m}_ci_high"] - tab.loc[0, f"{m}_ci_low"]
                for m in (
                    "raza_jaccard",
                    "hit_rate",
                    "precision",
                    "bidir_max_sim_a",
                    "hungarian_coverage_a",
                    "maxcard_f1",
                    "matched_sim_median",
                    "unique_match_rate_a",
                    "gap_abs_median_b",
                )
            }
        )
    small, large = widths
    for m in small:
        assert large[m] < small[m] / 2, (m, small[m], large[m])


def test_nan_handling_in_bootstrap_ci():
    S = diagonal_ish(5, 0)

    def stat(Sb):
        out = {"always_nan": np.nan, "mean": float(Sb.mean())}
        if Sb[0, 0] > 0.5:
            out["sometimes"] = 1.0
        return out

    ci = bootstrap_ci(S, stat, n_boot=200)
    assert all(np.isnan(x) for x in ci["always_nan"])
    assert ci["sometimes"] == (1.0, 1.0)  # NaN where missing, ignored
    lo, hi = ci["mean"]
    assert lo < S.mean() < hi


def test_single_column_gap_intervals_are_nan():
    tab = bootstrap_table(np.array([[0.8], [0.3], [0.75]]), [0.7], n_boot=50)
    assert np.isnan(tab.loc[0, "gap_abs_median_a_ci_low"])
    assert not np.isnan(tab.loc[0, "gap_abs_median_b_ci_low"])
    assert tab.loc[0, "hit_rate_ci_high"] <= 1


def test_bad_arguments():
    S = diagonal_ish(4, 0)
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap_table(S, [0.5], n_boot=0)
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(S, lambda Sb: {}, level=95)
    with pytest.raises(ValueError, match="op must be"):
        bootstrap_table(S, [0.5], op="gte")
