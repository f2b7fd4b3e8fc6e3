import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from themesim.metrics.sets.baselines import (
    BASELINE_COLUMNS,
    SYMMETRIC_COLUMNS,
    baseline_summary,
    symmetric_baselines,
    within_baselines,
)

# Five themes of A; the diagonal is ignored.
W_A = np.array(
    [
        [1.0, 0.2, 0.3, 0.4, 0.5],
        [0.2, 1.0, 0.1, 0.3, 0.6],
        [0.3, 0.1, 1.0, 0.2, 0.2],
        [0.4, 0.3, 0.2, 1.0, 0.35],
        [0.5, 0.6, 0.2, 0.35, 1.0],
    ]
)
S = np.array(
    [
        [0.80, 0.45, 0.10],
        [0.30, 0.45, 0.05],
        [0.20, 0.05, 0.00],
        [0.10, 0.90, 0.20],
        [0.30, 0.20, 0.70],
    ]
)


def test_hand_computed_five_themes():
    b = within_baselines(S, W_A)
    assert list(b.columns) == BASELINE_COLUMNS
    # Row 0: W = 0.2, 0.3, 0.4, 0.5 -> mean 0.35; squared deviations 0.0225, 0.0025, 0.0025,
    # 0.0225 sum to 0.05, /3 -> std 0.129099. best 0.80: adjusted 0.45, z 0.45/0.129099
    # = 3.4857; cross gap 0.80 - 0.45 = 0.35, within gap 0.5 - 0.4 = 0.1 -> rel 3.5;
    # 0.80 beats all 4 within values -> percentile 100.
    r = b.loc[0]
    assert r["baseline_mean"] == pytest.approx(0.35)
    assert r["baseline_std"] == pytest.approx(0.129099, abs=1e-6)
    assert r["baseline_adjusted"] == pytest.approx(0.45)
    assert r["baseline_z"] == pytest.approx(3.4857, abs=1e-4)
    assert r["baseline_rel_gap"] == pytest.approx(3.5)
    assert r["baseline_percentile"] == 100.0
    assert r["baseline_flag"] == ""
    # Row 1: W = 0.2, 0.1, 0.3, 0.6 -> mean 0.3; deviations -0.1, -0.2, 0, 0.3 -> 0.14/3
    # -> std 0.216025. best 0.45: z 0.15/0.216025 = 0.6944; cross gap 0.45 - 0.30 = 0.15,
    # within gap 0.6 - 0.3 = 0.3 -> rel 0.5; 0.45 beats 0.2, 0.1, 0.3 -> 75.
    r = b.loc[1]
    assert r["baseline_z"] == pytest.approx(0.6944, abs=1e-4)
    assert r["baseline_rel_gap"] == pytest.approx(0.5)
    assert r["baseline_percentile"] == 75.0
    # Row 2: W = 0.3, 0.1, 0.2, 0.2 -> mean 0.2, std sqrt(0.02/3) = 0.08165. best 0.20:
    # z 0; rel gap 0.15 / 0.1 = 1.5. Percentile, kind "strict": 0.20 beats only 0.1 -> 25
    # (a tie is not a win; "weak" would give 75, "rank" 50).
    r = b.loc[2]
    assert r["baseline_std"] == pytest.approx(0.08165, abs=1e-5)
    assert r["baseline_z"] == pytest.approx(0.0, abs=1e-12)
    assert r["baseline_rel_gap"] == pytest.approx(1.5)
    assert r["baseline_percentile"] == 25.0
    assert (b["baseline_flag"] == "").all()


def test_diagonal_is_ignored():
    W = W_A.copy()
    np.fill_diagonal(W, -7.0)
    pd.testing.assert_frame_equal(within_baselines(S, W), within_baselines(S, W_A))


def test_zero_spread_gives_nan_and_flag():
    W = np.full((4, 4), 0.3)
    b = within_baselines(S[:4], W)
    assert b["baseline_z"].isna().all() and b["baseline_rel_gap"].isna().all()
    assert (b["baseline_flag"] == "zero_spread;zero_within_gap").all()
    # Mean, adjusted and percentile are still defined: 0.80 beats all three 0.3s.
    assert b.loc[0, "baseline_adjusted"] == pytest.approx(0.5)
    assert b.loc[0, "baseline_percentile"] == 100.0


def test_zero_within_gap_only():
    # Row 0: W = 0.5, 0.5, 0.1 -> spread > 0 but the two largest tie.
    W = np.array([[1, 0.5, 0.5, 0.1], [0.5, 1, 0.2, 0.3], [0.5, 0.2, 1, 0.4], [0.1, 0.3, 0.4, 1]])
    b = within_baselines(S[:4], W)
    assert b.loc[0, "baseline_flag"] == "zero_within_gap"
    assert np.isnan(b.loc[0, "baseline_rel_gap"]) and np.isfinite(b.loc[0, "baseline_z"])


def test_two_themes_is_too_small():
    # n = 2: one within value. Its mean is a fact; a spread or a rank is not.
    b = within_baselines(np.array([[0.8, 0.2], [0.3, 0.6]]), np.array([[1, 0.4], [0.4, 1]]))
    assert (b["baseline_flag"] == "too_small").all()
    for c in ("baseline_std", "baseline_z", "baseline_rel_gap", "baseline_percentile"):
        assert b[c].isna().all(), c
    assert b["baseline_mean"].tolist() == [0.4, 0.4]
    assert b["baseline_adjusted"].tolist() == pytest.approx([0.4, 0.2])


def test_one_theme_has_no_baseline():
    b = within_baselines(np.array([[0.8, 0.2]]), np.array([[1.0]]))
    assert b.loc[0, "baseline_flag"] == "too_small"
    assert b.drop(columns=["best_cross", "baseline_flag"]).isna().all().all()


def test_single_candidate_column():
    b = within_baselines(S[:, :1], W_A)
    assert (b["baseline_flag"] == "single_candidate").all()
    assert b["baseline_rel_gap"].isna().all() and b["baseline_z"].notna().all()


def test_within_matrix_shape_checked():
    with pytest.raises(ValueError, match="W_a must be 5 x 5"):
        within_baselines(S, W_A[:4, :4])


def test_symmetric_hand_computed():
    W_b = np.array(
        [[1, 0.1, 0.2, 0.3], [0.1, 1, 0.5, 0.4], [0.2, 0.5, 1, 0.45], [0.3, 0.4, 0.45, 1]]
    )
    S4 = np.hstack([S, np.zeros((5, 1))])
    out = symmetric_baselines(S4, W_A, W_b, ([0, 1], [0, 1]))
    assert list(out.columns) == SYMMETRIC_COLUMNS
    # (0, 0): S = 0.80. A side as above, z 3.4857. B column 0: W = 0.1, 0.2, 0.3 -> mean
    # 0.2, std sqrt(0.02/2) = 0.1 -> z 6.0. Both > 2: passes.
    assert out.loc[0, "baseline_z_a"] == pytest.approx(3.4857, abs=1e-4)
    assert out.loc[0, "baseline_z_b"] == pytest.approx(6.0)
    # (1, 1): S = 0.45. A z 0.6944. B column 1: W = 0.1, 0.5, 0.4 -> mean 1/3, squared
    # deviations 0.054444, 0.027778, 0.004444 -> 0.086667/2 -> std 0.208167;
    # z = 0.116667/0.208167 = 0.5604.
    assert out.loc[1, "baseline_z_b"] == pytest.approx(0.5604, abs=1e-4)
    assert out["passes_a"].tolist() == [True, False]
    assert out["passes_b"].tolist() == [True, False]
    assert out["passes_both"].tolist() == [True, False]
    assert out["similarity"].tolist() == [0.80, 0.45]


def test_symmetric_too_small_side_is_na_not_fail():
    W_b = np.array([[1, 0.2, 0.4], [0.2, 1, 0.3], [0.4, 0.3, 1]])  # 2 within values each
    out = symmetric_baselines(S, W_A, W_b, ([0, 1], [0, 1]), z_min=2.0)
    assert (out["baseline_flag_b"] == "too_small").all()
    assert out["passes_b"].isna().all()
    # Pair 0 passes on A and cannot be judged on B: unknown. Pair 1 fails on A: fails.
    both = out["passes_both"].tolist()
    assert pd.isna(both[0]) and both[1] is False


def test_symmetric_pairs_checked():
    with pytest.raises(ValueError, match="pairs must be"):
        symmetric_baselines(S, W_A, np.eye(3), [(0, 0), (1, 1), (2, 2)])


def test_summary_of_within():
    df = pd.DataFrame(
        {
            "baseline_z": [3.0, 1.0, np.nan, 2.5],
            "baseline_adjusted": [0.3, 0.1, 0.05, -0.1],
            "baseline_rel_gap": [2.0, np.nan, np.nan, 1.0],
            "baseline_percentile": [100.0, 50.0, np.nan, 75.0],
            "baseline_flag": ["", "zero_within_gap", "too_small", ""],
        }
    )
    s = baseline_summary(df)
    assert s["baseline_n_themes"] == 4 and s["baseline_n_defined_z"] == 3
    assert s["baseline_z_median"] == 2.5
    assert s["baseline_share_z_gt_2"] == pytest.approx(2 / 3)
    assert s["baseline_share_z_gt_3"] == 0.0  # 3 is not > 3
    assert s["baseline_adjusted_median"] == pytest.approx(0.075)
    assert s["baseline_share_adjusted_gt_0"] == 0.75
    assert s["baseline_rel_gap_median"] == 1.5
    assert s["baseline_percentile_median"] == 75.0
    assert s["baseline_share_flagged"] == 0.5
    assert all(k.startswith("baseline_") for k in s)


def test_summary_of_symmetric_and_all_nan():
    W_b = np.array([[1, 0.2, 0.4], [0.2, 1, 0.3], [0.4, 0.3, 1]])
    s = baseline_summary(symmetric_baselines(S, W_A, W_b, ([0, 1], [0, 1])))
    assert s["baseline_n_pairs"] == 2 and s["baseline_n_judged_pairs"] == 1
    assert s["baseline_share_passes_both"] == 0.0
    assert s["baseline_share_passes_a"] == 0.5
    assert np.isnan(s["baseline_share_passes_b"])
    tiny = within_baselines(np.array([[0.8, 0.2], [0.3, 0.6]]), np.eye(2))
    assert np.isnan(baseline_summary(tiny)["baseline_z_median"])
    assert np.isnan(baseline_summary(tiny)["baseline_share_z_gt_2"])


def _random_case(seed, n, m, digits):
    rng = np.random.default_rng(seed)
    S = np.round(rng.uniform(-1, 1, size=(n, m)), digits)
    X = rng.normal(size=(n, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return S, np.round(X @ X.T, digits)


cases = st.builds(
    _random_case,
    st.integers(0, 2**32 - 1),
    st.integers(1, 7),
    st.integers(1, 5),
    st.sampled_from([1, 2, 15]),  # coarse values give ties and zero spreads
)


@settings(max_examples=100, deadline=None)
@given(cases)
def test_never_inf_and_nan_is_always_explained(case):
    S_, W = case
    b = within_baselines(S_, W)
    values = b.drop(columns="baseline_flag").to_numpy(float)
    assert not np.isinf(values).any()
    for _, r in b.iterrows():
        if np.isnan(r["baseline_z"]):
            assert "too_small" in r["baseline_flag"] or "zero_spread" in r["baseline_flag"]
        if np.isnan(r["baseline_rel_gap"]):
            assert r["baseline_flag"] != ""
        assert np.isnan(r["baseline_percentile"]) or 0 <= r["baseline_percentile"] <= 100


@settings(max_examples=50, deadline=None)
@given(cases, st.integers(0, 2**32 - 1))
def test_invariant_to_theme_order(case, seed):
    S_, W = case
    rng = np.random.default_rng(seed)
    p, q = rng.permutation(S_.shape[0]), rng.permutation(S_.shape[1])
    a = within_baselines(S_, W).iloc[p].reset_index(drop=True)
    b = within_baselines(S_[p][:, q], W[p][:, p])
    pd.testing.assert_frame_equal(a, b, rtol=0, atol=1e-12)
