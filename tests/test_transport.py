import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from themesim.metrics.sets.transport import (
    PLAN_LONG_COLUMNS,
    SPLIT_JOIN_COLUMNS,
    SUMMARY_KEYS,
    plan_long,
    splits_and_joins,
    transport_summary,
    unbalanced_plan,
)

# A1 matches B1 and B2 equally, A2 matches B3: A1 should be split over B1;B2.
S_SPLIT = np.array([[0.9, 0.9, 0.1], [0.1, 0.1, 0.9]])
A2, B3 = ["A1", "A2"], ["B1", "B2", "B3"]


def random_S(n_a, n_b, seed=0):
    rng = np.random.default_rng(seed)
    E = rng.normal(size=(n_a + n_b, 32))
    E /= np.linalg.norm(E, axis=1, keepdims=True)
    return E[:n_a] @ E[n_a:].T


def test_plan_shape_dtype_nonnegative():
    P = unbalanced_plan(random_S(4, 6))
    assert P.shape == (4, 6) and P.dtype == np.float64
    assert (P >= 0).all() and np.isfinite(P).all()


def test_mass_conserved_with_large_reg_m():
    # reg_m → ∞ is balanced OT: row/column sums must reach the uniform marginals.
    S = random_S(5, 7)
    P = unbalanced_plan(S, reg_m=1e3)
    np.testing.assert_allclose(P.sum(axis=1), np.full(5, 1 / 5), atol=1e-3)
    np.testing.assert_allclose(P.sum(axis=0), np.full(7, 1 / 7), atol=1e-3)


def test_custom_marginals_respected_with_large_reg_m():
    S = random_S(3, 3, seed=1)
    a, b = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.2, 0.6])
    P = unbalanced_plan(S, reg_m=1e3, a=a, b=b)
    np.testing.assert_allclose(P.sum(axis=1), a, atol=1e-3)
    np.testing.assert_allclose(P.sum(axis=0), b, atol=1e-3)


def test_small_reg_m_leaves_mass_behind():
    S = random_S(5, 5, seed=2)
    assert unbalanced_plan(S, reg_m=0.1).sum() < unbalanced_plan(S, reg_m=1e3).sum()


def test_deterministic():
    S = random_S(6, 4, seed=3)
    np.testing.assert_array_equal(unbalanced_plan(S), unbalanced_plan(S))


def test_identity_like_puts_mass_on_diagonal():
    S = np.full((5, 5), 0.1) + 0.8 * np.eye(5)
    P = unbalanced_plan(S)
    assert np.trace(P) / P.sum() > 0.95
    assert (P.argmax(axis=1) == np.arange(5)).all()


def test_permutation_equivariance():
    S = random_S(5, 6, seed=4)
    p, q = np.array([3, 0, 4, 1, 2]), np.array([5, 2, 0, 1, 4, 3])
    np.testing.assert_allclose(unbalanced_plan(S[p][:, q]), unbalanced_plan(S)[p][:, q], atol=1e-12)


def test_underflow_raises_clear_error():
    # cost 1 everywhere, reg 1e-3: exp(-1000) underflows to 0 in float64
    with pytest.raises(ValueError, match="larger reg"):
        unbalanced_plan(np.zeros((3, 3)), reg=1e-3)


@pytest.mark.parametrize(
    "bad", [np.array([[np.nan, 0.1]]), np.zeros((0, 3)), np.zeros(3)], ids=["nan", "empty", "1d"]
)
def test_bad_S_rejected(bad):
    with pytest.raises(ValueError):
        unbalanced_plan(bad)


def test_bad_marginal_rejected():
    with pytest.raises(ValueError, match="a must be"):
        unbalanced_plan(np.eye(2), a=[1.0, -1.0])


@settings(max_examples=25, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 6)), elements=st.floats(-1, 1))
)
def test_plan_valid_for_any_cosine_matrix(S):
    P = unbalanced_plan(S)
    assert P.shape == S.shape and np.isfinite(P).all() and (P >= 0).all()
    # never more mass moved than a or b could offer by much (KL penalty, reg_m = 1)
    assert P.sum() <= 1.5


def test_plan_long_columns_order_and_shares():
    P = unbalanced_plan(S_SPLIT)
    df = plan_long(P, A2, B3)
    assert list(df.columns) == PLAN_LONG_COLUMNS
    assert list(df["a_id"]) == ["A1"] * 3 + ["A2"] * 3  # A-major
    assert list(df["b_id"]) == B3 * 2
    np.testing.assert_allclose(df["mass"], P.ravel())
    np.testing.assert_allclose(df.groupby("a_id")["share_of_a"].sum(), 1.0)
    np.testing.assert_allclose(df.groupby("b_id")["share_of_b"].sum(), 1.0)
    row = df[(df.a_id == "A1") & (df.b_id == "B2")].iloc[0]
    assert row["share_of_a"] == pytest.approx(P[0, 1] / P[0].sum())
    assert row["share_of_b"] == pytest.approx(P[0, 1] / P[:, 1].sum())


def test_plan_long_id_mismatch():
    with pytest.raises(ValueError, match="does not match"):
        plan_long(np.ones((2, 3)), ["A1"], B3)


def test_split_detected():
    sj = splits_and_joins(unbalanced_plan(S_SPLIT), A2, B3)
    assert list(sj.columns) == SPLIT_JOIN_COLUMNS
    assert len(sj) == 1
    r = sj.iloc[0]
    assert (r["kind"], r["theme_id"], r["partners"], r["n_partners"]) == ("split", "A1", "B1;B2", 2)
    shares = [float(x) for x in r["shares"].split(";")]
    assert shares == pytest.approx([0.5, 0.5], abs=0.01)
    assert all(len(x.split(".")[1]) == 3 for x in r["shares"].split(";"))


def test_join_detected_symmetric():
    sj = splits_and_joins(unbalanced_plan(S_SPLIT.T), B3, A2)
    assert len(sj) == 1
    r = sj.iloc[0]
    assert (r["kind"], r["theme_id"], r["partners"], r["n_partners"]) == ("join", "A1", "B1;B2", 2)


def test_min_share_controls_partners():
    P = unbalanced_plan(S_SPLIT)
    assert splits_and_joins(P, A2, B3, min_share=0.6).empty
    assert list(splits_and_joins(P, A2, B3, min_share=0.6).columns) == SPLIT_JOIN_COLUMNS


def test_no_splits_or_joins_on_one_to_one():
    S = np.full((4, 4), 0.1) + 0.8 * np.eye(4)
    assert splits_and_joins(unbalanced_plan(S), list("abcd"), list("wxyz")).empty


def test_transport_summary():
    P = unbalanced_plan(S_SPLIT)
    s = transport_summary(P, S_SPLIT)
    assert list(s) == SUMMARY_KEYS
    assert s["ot_total_mass"] == pytest.approx(P.sum())
    # uniform marginals sum to 1 on each side
    assert s["ot_mass_a_frac"] == pytest.approx(P.sum())
    assert s["ot_mass_b_frac"] == pytest.approx(P.sum())
    assert (s["ot_n_splits"], s["ot_n_joins"]) == (1, 0)
    assert s["ot_cost"] == pytest.approx((P * (1 - S_SPLIT)).sum() / P.sum())
    # the good pairs (cost 0.1) carry almost all of the moved mass
    assert 0.1 <= s["ot_cost"] < 0.15


def test_transport_summary_fracs_with_custom_marginals():
    a, b = np.array([2.0, 2.0]), np.array([1.0, 1.0, 2.0])
    P = unbalanced_plan(S_SPLIT, a=a, b=b, reg_m=1e3)
    s = transport_summary(P, S_SPLIT, a=a, b=b)
    assert s["ot_mass_a_frac"] == pytest.approx(P.sum() / 4)
    assert s["ot_mass_b_frac"] == pytest.approx(P.sum() / 4)
    assert s["ot_mass_a_frac"] == pytest.approx(1.0, abs=1e-3)
