import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seed_examples import EX4

from themesim.metrics.sets.coverage import score
from themesim.metrics.sets.distinctiveness import (
    CATEGORIES,
    GAP_COLUMNS,
    THEME_GAP_COLUMNS,
    angle_deg,
    angular_sim,
    gap_summary,
    theme_gaps,
)


def test_seed_angles():
    # Seed 000, "Rigorous alternative: angular distance".
    assert angle_deg([0.9, 0.8, 0.3, 0.2]).round(1).tolist() == [25.8, 36.9, 72.5, 78.5]
    # The seed's gaps, 11.1 and 6.0 degrees, are differences of the rounded angles; the
    # exact gaps are 11.03 and 5.92. The point (same cosine step, smaller angle) stands.
    a = angle_deg([0.9, 0.8, 0.3, 0.2])
    assert round(a[1] - a[0], 2) == 11.03 and round(a[3] - a[2], 2) == 5.92


def test_angular_sim_and_clipping():
    assert angular_sim([1.0, 0.0, -1.0]).tolist() == [1.0, 0.5, 0.0]
    # Rounding can push a cosine just past 1; that is still 0 degrees, not NaN.
    assert angle_deg([1 + 1e-9, -1 - 1e-9]).tolist() == [0.0, 180.0]


def one_row(best, second, threshold=0.7, **kw):
    return theme_gaps(np.array([[best, second, 0.1]]), threshold=threshold, **kw).iloc[0]


def test_seed_case_a_clear_winner():
    r = one_row(0.85, 0.45)
    assert r["category"] == "confident_unique"
    assert r["gap_abs"] == pytest.approx(0.40)
    assert r["gap_rel"] == pytest.approx(0.40 / 0.85)
    assert r["gap_norm"] == pytest.approx(0.40 / 0.85)


def test_seed_case_b_ambiguous():
    r = one_row(0.85, 0.82)
    assert r["category"] == "ambiguous"
    assert r["gap_abs"] == pytest.approx(0.03)


def test_four_categories():
    S = np.array(
        [
            [0.85, 0.45, 0.10],  # good, distinct
            [0.85, 0.82, 0.10],  # good, not distinct
            [0.60, 0.30, 0.10],  # poor, distinct
            [0.50, 0.45, 0.40],  # poor, not distinct
        ]
    )
    g = theme_gaps(S, threshold=0.7, gamma=0.15)
    assert list(g.columns) == THEME_GAP_COLUMNS
    assert g["category"].tolist() == list(CATEGORIES)


def test_gap_equal_to_gamma_counts_despite_rounding():
    # 0.60 - 0.45 is 0.14999999999999997 in floating point.
    assert one_row(0.60, 0.45)["category"] == "clear_but_poor"
    assert one_row(0.85, 0.70)["category"] == "confident_unique"


def test_op_ge_and_gt_at_the_threshold():
    assert one_row(0.7, 0.3, op="ge")["category"] == "confident_unique"
    assert one_row(0.7, 0.3, op="gt")["category"] == "clear_but_poor"


def test_angular_gaps():
    r = one_row(0.9, 0.8)
    assert r["best_angle_deg"] == pytest.approx(25.84, abs=0.01)
    assert r["gap_angle_deg"] == pytest.approx(36.87 - 25.84, abs=0.01)
    # Relative to the runner-up's angle: 1 - 25.84 / 36.87.
    assert r["gap_angle_rel"] == pytest.approx(1 - 25.842 / 36.870, abs=1e-4)


def test_zero_denominators_give_nan_not_inf():
    g = theme_gaps(np.array([[1.0, 1.0], [0.0, 0.0], [-0.2, -0.5]]), threshold=0.5)
    assert np.isnan(g.loc[0, "gap_angle_rel"])  # both at 0 degrees
    assert np.isnan(g.loc[1, "gap_rel"]) and np.isnan(g.loc[1, "gap_norm"])
    # A negative best has no "percent better": NaN; gap_norm uses |.| and stays defined.
    assert np.isnan(g.loc[2, "gap_rel"])
    assert g.loc[2, "gap_norm"] == pytest.approx(0.3 / 0.5)


def test_lone_candidate_counts_as_distinct():
    g = theme_gaps(np.array([[0.85], [0.30]]), threshold=0.7)
    assert g["category"].tolist() == ["confident_unique", "clear_but_poor"]
    assert g[["second", "gap_abs", "gap_rel", "gap_norm", "gap_angle_deg"]].isna().all().all()


def test_tie_for_best_is_ambiguous():
    assert one_row(0.85, 0.85)["category"] == "ambiguous"


def test_example4_summary():
    # Rows of seed example 4: gaps 0.05, 0.05, 0.55; columns: 0.05, 0.05, 0.45.
    s = gap_summary(EX4, [0.7]).iloc[0]
    assert list(gap_summary(EX4, [0.7]).columns) == ["threshold"] + GAP_COLUMNS
    assert s["unique_match_rate_a"] == pytest.approx(1 / 3)
    assert s["share_ambiguous_a"] == pytest.approx(2 / 3)
    assert s["gap_abs_median_a"] == pytest.approx(0.05)
    assert s["gap_abs_max_a"] == pytest.approx(0.55)
    assert s["gap_abs_q3_a"] == pytest.approx(0.30)  # numpy percentile: 0.05 + 0.5 * 0.5
    assert s["gap_abs_max_b"] == pytest.approx(0.45)


def test_summary_one_row_per_threshold_in_order():
    s = gap_summary(EX4, [0.9, 0.5, 0.7])
    assert s["threshold"].tolist() == [0.9, 0.5, 0.7]
    # At 0.9 nothing passes; row 3 (0.85 vs 0.30) is still clear, the others are not.
    assert s["share_no_good_match_a"].tolist() == pytest.approx([2 / 3, 0.0, 0.0])
    assert s["share_clear_but_poor_a"].tolist() == pytest.approx([1 / 3, 0.0, 0.0])


def test_summary_single_column_has_nan_quartiles():
    s = gap_summary(np.array([[0.8], [0.3]]), [0.5]).iloc[0]
    assert np.isnan(s["gap_abs_median_a"]) and s["unique_match_rate_a"] == 0.5
    assert s["gap_abs_median_b"] == pytest.approx(0.5)


def test_summary_rejects_bad_input():
    with pytest.raises(ValueError, match="op must be"):
        gap_summary(EX4, [0.5], op="gte")
    with pytest.raises(ValueError, match="at least one threshold"):
        gap_summary(EX4, [])


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


@settings(max_examples=100, deadline=None)
@given(matrices, st.floats(-1, 1, allow_nan=False), ops, st.floats(0, 0.5))
def test_summary_agrees_with_theme_gaps_and_score(S, t, op, gamma):
    s = gap_summary(S, [t], op, gamma).iloc[0]
    m = score(S, [t], op).iloc[0]
    for side, M, covered in (("a", S, m["hit_rate"]), ("b", S.T, m["precision"])):
        g = theme_gaps(M, threshold=t, op=op, gamma=gamma)
        for c in CATEGORIES:
            assert s[f"share_{c}_{side}"] == pytest.approx((g["category"] == c).mean())
        assert s[f"unique_match_rate_{side}"] == s[f"share_confident_unique_{side}"]
        # Quality is the match test itself, so "passes quality" = "has a match".
        good = s[f"share_confident_unique_{side}"] + s[f"share_ambiguous_{side}"]
        assert good == pytest.approx(covered)
        if M.shape[1] > 1:
            q = np.percentile(g["gap_abs"], [0, 25, 50, 75, 100])
            names = ["min", "q1", "median", "q3", "max"]
            got = [s[f"gap_abs_{n}_{side}"] for n in names]
            assert got == pytest.approx(q.tolist())
        values = g.drop(columns="category").to_numpy(float)
        assert not np.isinf(values).any()
        assert (g["gap_abs"].dropna() >= 0).all() and (g["gap_angle_deg"].dropna() >= 0).all()
        assert g["gap_angle_rel"].dropna().between(0, 1).all()
        assert g["gap_norm"].dropna().between(0, 2).all()


@settings(max_examples=50, deadline=None)
@given(matrices, ops, st.integers(0, 2**32 - 1))
def test_summary_invariant_to_theme_order(S, op, seed):
    rng = np.random.default_rng(seed)
    P = S[rng.permutation(S.shape[0])][:, rng.permutation(S.shape[1])]
    a, b = gap_summary(S, [0.0, 0.5], op), gap_summary(P, [0.0, 0.5], op)
    np.testing.assert_allclose(a.to_numpy(float), b.to_numpy(float), rtol=0, atol=1e-12)
