"""Set-level intervals (metrics/intervals/intervals.py): exact where a metric is a count, jackknife
for means, order statistics for quartiles. Their coverage is measured by the validation suite
(tests/test_validate_intervals.py); here: hand-computed values and properties."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from themesim.metrics.interval_stats import (
    clopper_pearson,
    quantile_intervals,
    two_sample_jackknife,
)
from themesim.metrics.intervals.intervals import (
    BOUND_COLUMNS,
    CI_COLUMNS,
    CI_METRICS,
    COUNT_METRICS,
    ICC_COLUMNS,
    interval_table,
)
from themesim.metrics.sets.coverage import score
from themesim.metrics.sets.distinctiveness import gap_summary


def point_estimates(S, thresholds, op="ge", gamma=0.15) -> pd.DataFrame:
    s = score(S, thresholds, op).drop(columns=["n_a", "n_b"])
    g = gap_summary(S, thresholds, op, gamma).drop(columns="threshold")
    return pd.concat([s, g], axis=1)


def test_clopper_pearson_matches_statsmodels_and_five_of_five():
    for x, n in ((0, 5), (5, 5), (3, 8), (1, 30), (17, 20)):
        lo, hi = clopper_pearson(x, n)
        want = proportion_confint(x, n, alpha=0.05, method="beta")
        assert (float(lo), float(hi)) == pytest.approx(want)
    lo, hi = clopper_pearson(5, 5)
    assert float(lo) == pytest.approx(0.4782, abs=1e-4) and float(hi) == 1.0


def test_perfect_diagonal_is_not_certain():
    S = np.full((5, 5), 0.1)
    np.fill_diagonal(S, 0.9)
    r = interval_table(S, [0.6]).iloc[0]
    assert r["hungarian_f1_ci_low"] == pytest.approx(0.4782, abs=1e-4)
    assert r["hungarian_f1_ci_high"] == 1.0
    assert r["hit_rate_ci_low"] == pytest.approx(0.4782, abs=1e-4)
    # 5 of 5 matched pairs: k in [2.39, 5]; true Jaccard k / (10 - k)
    assert r["hungarian_n_matched_ci_low"] == pytest.approx(5 * 0.47818, abs=1e-3)
    assert r["true_jaccard_ci_low"] == pytest.approx(2.3909 / (10 - 2.3909), abs=1e-3)
    assert r["ci_method"].startswith("themes independent: clopper-pearson")


def test_one_to_one_counts_use_the_smaller_set():
    # 10 x 16, 4 one-to-one matches: F1 = 2k / 26, interval the image of k's out of 10
    S = np.full((10, 16), 0.2)
    S[np.arange(4), np.arange(4)] = 0.8
    r = interval_table(S, [0.6]).iloc[0]
    lo, hi = proportion_confint(4, 10, alpha=0.05, method="beta")
    assert r["hungarian_f1_ci_low"] == pytest.approx(2 * 10 * lo / 26)
    assert r["hungarian_f1_ci_high"] == pytest.approx(2 * 10 * hi / 26)
    assert r["hungarian_coverage_b_ci_high"] == pytest.approx(
        proportion_confint(4, 16, alpha=0.05, method="beta")[1]
    )


def test_median_interval_by_hand():
    # n = 10, q = 0.5: Binomial(10, 0.5) puts 0.011 below 2 and 0.011 at or above 9
    lo, hi = quantile_intervals(np.arange(1.0, 11.0), [0.5], 0.95, -np.inf, np.inf)
    assert (lo[0], hi[0]) == (2.0, 9.0)
    # the maximum of 4 values is read as the 0.8 quantile: no upper rank, the bound is used
    lo, hi = quantile_intervals(np.array([0.7, 0.75, 0.8, 0.9]), [0.8], 0.95, 0.6, 1.0)
    assert (lo[0], hi[0]) == (0.7, 1.0)


def test_two_sample_jackknife_by_hand():
    # the mean of rows' values 1, 2, 3 (B side constant): delete-one means 2.5, 2, 1.5,
    # variance 2/3 * 0.5 = 1/3, t with 2 degrees of freedom
    rows = np.array([[1.0, 1], [2.0, 1], [3.0, 1]])
    cols = np.array([[2.0, 1], [2.0, 1], [2.0, 1]])
    lo, hi = two_sample_jackknife(lambda p: p[0] / p[1], rows, cols, 0.95)
    half = 4.302653 * np.sqrt(1 / 3)
    assert (lo, hi) == pytest.approx((2 - half, 2 + half), rel=1e-6)


def test_a_join_widens_precision_beyond_the_independent_interval():
    # B's themes 0-3 all belong to A's theme 0 (a join of four), 4-9 to nobody: the four
    # stand or fall together (deleting A's theme 0 takes all four hits), so precision rests
    # on fewer independent units than 10.
    S = np.full((6, 10), 0.2)
    S[0, :4] = 0.8
    S[1, 4] = 0.8
    r = interval_table(S, [0.6]).iloc[0]
    lo, hi = proportion_confint(5, 10, alpha=0.05, method="beta")
    assert r["precision_ci_high"] - r["precision_ci_low"] > hi - lo
    assert "design effect" in r["ci_method"]


def test_no_match_seen_is_exact_and_its_worst_case_a_named_bound():
    # 6 x 12, nothing at theta: the 95 % interval is exact under independent themes (0 of 6,
    # 0 of 12); the worst case for a structure the sample cannot show (2 x 2 blocks: shares
    # out of 6 / 2 = 3 units, the pair count reaching 3 blocks of 4 pairs) is the bound.
    S = np.full((6, 12), 0.3)
    S[0, 0] = 0.1
    r = interval_table(S, [0.6]).iloc[0]
    six = proportion_confint(0, 6, alpha=0.05, method="beta")[1]
    three = proportion_confint(0, 3, alpha=0.05, method="beta")[1]
    assert three == pytest.approx(0.7076, abs=1e-4)
    assert r["hit_rate_ci_high"] == pytest.approx(six)
    assert r["precision_ci_high"] == pytest.approx(
        proportion_confint(0, 12, alpha=0.05, method="beta")[1]
    )
    assert r["n_match_pairs_ci_high"] == pytest.approx(6 * six)
    assert r["precision_bound_high"] == pytest.approx(three)
    assert r["hit_rate_bound_high"] == pytest.approx(three)
    assert r["share_no_good_match_b_bound_low"] == pytest.approx(1 - three)
    assert r["n_match_pairs_bound_high"] == pytest.approx(4 * 3 * three)
    assert r["raza_jaccard_bound_high"] == pytest.approx(12 * three / 72)
    assert r["gap_abs_max_a_ci_high"] == pytest.approx(1.0 - 0.1)
    # the bound always holds the interval
    for m in COUNT_METRICS:
        assert r[f"{m}_bound_low"] <= r[f"{m}_ci_low"] + 1e-12
        assert r[f"{m}_bound_high"] >= r[f"{m}_ci_high"] - 1e-12


def test_no_match_seen_with_groups_declared_reaches_whole_groups_in_the_bound():
    # 9 x 12, nothing at theta, A and B in three declared groups of three (B's last three
    # themes ungrouped): with groups the shares count on the groups (0 of 3 units a side for
    # A, 0 of 6 for B); a matched theme may match a whole group of three of the other side,
    # so the pair count's bound reaches 9 x 0.708 x 3 = 19.1 (2 x 2 blocks gave 12.7).
    S = np.full((9, 12), 0.3)
    ga = [f"c{i // 3}" for i in range(9)]
    gb = ga + [None] * 3
    r = interval_table(S, [0.6], groups_a=ga, groups_b=gb).iloc[0]
    three = proportion_confint(0, 3, alpha=0.05, method="beta")[1]
    six = proportion_confint(0, 6, alpha=0.05, method="beta")[1]
    assert r["hit_rate_ci_high"] == pytest.approx(three)
    assert r["precision_ci_high"] == pytest.approx(six)
    assert r["n_match_pairs_bound_high"] == pytest.approx(max(9 * three * 3, 12 * six * 3))
    assert r["raza_jaccard_bound_high"] == pytest.approx(r["n_match_pairs_bound_high"] / 108)
    # without groups the bound is the 2 x 2 rule's, as before
    plain = interval_table(S, [0.6]).iloc[0]
    assert plain["n_match_pairs_bound_high"] < 9 * three * 3


def test_blocks_that_all_match_are_the_units():
    # 8 x 8 in four 2 x 2 blocks whose four cells all match (0.8), everything else 0.2.
    # Deleting one theme leaves its twin matching, so the jackknife shows no variance; the
    # four blocks are the units: hit rate 4 of 4, [0.398, 1], not 8 of 8 ([0.631, 1]).
    S = np.full((8, 8), 0.2)
    for b in range(4):
        S[2 * b : 2 * b + 2, 2 * b : 2 * b + 2] = 0.8
    r = interval_table(S, [0.6]).iloc[0]
    four = proportion_confint(4, 4, alpha=0.05, method="beta")[0]
    assert four == pytest.approx(0.3976, abs=1e-4)
    assert r["hit_rate_ci_low"] == pytest.approx(four)
    assert r["precision_ci_low"] == pytest.approx(four)
    assert r["share_no_good_match_a_ci_high"] == pytest.approx(1 - four)
    # 16 pairs, 2 per matched theme: as few as 8 x 0.398 matched themes hold 2 each
    assert r["n_match_pairs_ci_low"] == pytest.approx(8 * four * 2)
    # A row's maximum without its matches is 0.2 (its second best, 0.8, matches too):
    # the mean of maxima reaches 0.2 + 0.398 x (0.8 - 0.2).
    assert r["bidir_max_sim_a_ci_low"] == pytest.approx(0.2 + four * 0.6)
    assert "design effect" in r["ci_method"]


def test_one_to_one_pairs_are_exact_and_reach_either_sides_count_in_the_bound():
    # 10 x 16, 4 pairs seen one to one: out of 10 units [0.12, 0.74] x 10 (exact); if B's
    # themes split A's in the population, each pair is one of B's 16 themes (the bound)
    S = np.full((10, 16), 0.2)
    S[np.arange(4), np.arange(4)] = 0.8
    r = interval_table(S, [0.6]).iloc[0]
    lo10, hi10 = proportion_confint(4, 10, alpha=0.05, method="beta")
    hi16 = proportion_confint(4, 16, alpha=0.05, method="beta")[1]
    assert r["n_match_pairs_ci_low"] == pytest.approx(10 * lo10)
    assert r["n_match_pairs_ci_high"] == pytest.approx(10 * hi10)
    assert r["n_match_pairs_bound_high"] == pytest.approx(16 * hi16)


def test_mean_of_maxima_reaches_the_unseen_matched_rows():
    # No row matches at 0.6, every row's maximum 0.5: a jackknife sees no spread, but up
    # to 46 % of A's themes (Clopper-Pearson, 0 of 6) could match, at most at 1:
    # 0.5 + 0.459 * (1 - 0.5).
    S = np.full((6, 6), 0.2)
    np.fill_diagonal(S, 0.5)
    r = interval_table(S, [0.6]).iloc[0]
    h = proportion_confint(0, 6, alpha=0.05, method="beta")[1]
    assert r["bidir_max_sim_a_ci_high"] == pytest.approx(0.5 + h * 0.5)
    assert r["bidir_max_sim_a_ci_low"] == pytest.approx(0.5)
    # all rows matched at 0.9, second best 0.2: the unseen unmatched rows sit near 0.2
    S = np.full((6, 6), 0.2)
    np.fill_diagonal(S, 0.9)
    r = interval_table(S, [0.6]).iloc[0]
    h = proportion_confint(6, 6, alpha=0.05, method="beta")[0]
    assert r["bidir_max_sim_a_ci_low"] == pytest.approx(0.2 + h * 0.7)
    assert r["bidir_max_sim_a_ci_high"] == pytest.approx(0.9)


def test_a_share_at_one_keeps_its_clusters():
    # Every B theme matched through three splits of A's themes: precision 10 of 10, but
    # deleting a parent takes 3-4 hits at once; the interval reaches as far as the
    # jackknife's t-interval, not only to Clopper-Pearson's 10 of 10 (0.69).
    S = np.full((6, 10), 0.2)
    S[0, :4] = 0.8
    S[1, 4:7] = 0.8
    S[2, 7:] = 0.8
    r = interval_table(S, [0.6]).iloc[0]
    assert r["precision_ci_high"] == 1.0
    assert r["precision_ci_low"] < proportion_confint(10, 10, alpha=0.05, method="beta")[0]
    assert "design effect" in r["ci_method"]


def test_quartiles_read_at_numpys_expected_rank():
    # numpy's first quartile of 10 values sits at rank 3.25, the quantile 3.25 / 11 in
    # expectation: its interval is the order-statistic interval of that quantile
    from themesim.metrics.interval_stats import quartile_intervals

    x = np.arange(1.0, 11.0)
    lo, hi = quartile_intervals(x, 0.95, 0.0, 20.0)
    want = quantile_intervals(x, [3.25 / 11, 0.5, 7.75 / 11], 0.95, 0.0, 20.0)
    assert lo[1:4] == pytest.approx(want[0]) and hi[1:4] == pytest.approx(want[1])
    assert hi[1] == 7.0  # 0.25 would give rank 6


def test_quartile_reach_is_the_mean_over_matched_counts():
    # one unmatched gap 0 and one matched gap 1, h = 0.5: k = 0, 1, 2 matched rows with
    # probabilities 1/4, 1/2, 1/4; with one of each numpy's min, q1, median, q3, max are
    # 0, 0.25, 0.5, 0.75, 1, so the means are 1/4 + 1/2 of those
    from themesim.metrics.interval_stats import quartile_reach

    lo, hi = quartile_reach([0.0, 1.0], [False, True], (0.5, 0.5), 0.0, 2.0)
    assert lo == pytest.approx([0.25, 0.375, 0.5, 0.625, 0.75]) and hi == pytest.approx(lo)
    lo, hi = quartile_reach([0.0, 1.0], [False, True], (0.0, 1.0), 0.0, 2.0)
    assert lo == pytest.approx([0.0] * 5) and hi == pytest.approx([1.0] * 5)
    # no matched row seen: at h = 1 every row takes the bound
    lo, hi = quartile_reach([0.1, 0.2], [False, False], (0.0, 1.0), 0.0, 2.0)
    assert hi == pytest.approx([2.0] * 5)


matrices = st.builds(
    lambda seed, n, m, digits: np.round(
        np.random.default_rng(seed).uniform(-1, 1, size=(n, m)), digits
    ),
    st.integers(0, 2**32 - 1),
    st.integers(1, 7),
    st.integers(1, 7),
    st.sampled_from([1, 2, 15]),  # coarse values give ties
)


@settings(max_examples=40, deadline=None)
@given(matrices, st.sampled_from(["ge", "gt"]))
def test_every_interval_contains_its_estimate(S, op):
    t = [-0.5, 0.0, 0.3, 0.7]
    tab = interval_table(S, t, op)
    est = point_estimates(S, t, op)
    for m in CI_METRICS:
        lo, hi, e = tab[f"{m}_ci_low"], tab[f"{m}_ci_high"], est[m]
        ok = e.isna() | ((lo <= e + 1e-9) & (e <= hi + 1e-9))
        assert ok.all(), (m, list(zip(lo, e, hi, strict=True)))


def test_columns_and_arguments():
    S = np.random.default_rng(0).uniform(0, 1, (6, 8))
    a = interval_table(S, [0.5, 0.7])
    extra = BOUND_COLUMNS + ICC_COLUMNS
    assert list(a.columns) == ["threshold"] + CI_COLUMNS + extra + ["ci_method"]
    assert a[ICC_COLUMNS].isna().all().all()  # icc off
    pd.testing.assert_frame_equal(a, interval_table(S, [0.5, 0.7]))
    with pytest.raises(ValueError, match="level"):
        interval_table(S, [0.5], level=95)
    with pytest.raises(ValueError, match="op"):
        interval_table(S, [0.5], op="gte")


def test_declared_groups_make_the_groups_the_units():
    # 12 x 12 one to one; A's and B's themes in 4 groups of 3, two groups all found and two
    # all missed: deleting a group moves the hit rate by a quarter, so the interval is wider
    # than Clopper-Pearson on 12 independent themes; a theme without a group is its own unit.
    S = np.full((12, 12), 0.2)
    found = np.arange(6)
    S[found, found] = 0.8
    groups = [f"g{i // 3}" for i in range(12)]
    plain = interval_table(S, [0.6]).iloc[0]
    grouped = interval_table(S, [0.6], groups_a=groups, groups_b=groups).iloc[0]
    assert plain["hit_rate_ci_low"] == pytest.approx(
        proportion_confint(6, 12, alpha=0.05, method="beta")[0]
    )
    assert grouped["hit_rate_ci_low"] < plain["hit_rate_ci_low"]
    assert grouped["hit_rate_ci_high"] > plain["hit_rate_ci_high"]
    assert grouped["ci_method"].startswith("clustered by declared group")
    # no group anywhere (None, "", NaN) is the independent model
    none = interval_table(S, [0.6], groups_a=[None] * 6 + [""] * 6, groups_b=[np.nan] * 12)
    pd.testing.assert_frame_equal(none, interval_table(S, [0.6]))
    with pytest.raises(ValueError, match="groups"):
        interval_table(S, [0.6], groups_a=groups[:5])


def test_icc_sensitivity_is_clopper_pearson_on_the_design_effect():
    # 6 of 12 matched, icc 0.2: no groups declared, every two themes correlate (c = 12):
    # n_eff = 12 / (1 + 11 x 0.2) = 3.75; with 4 groups of 3, c = 3: 12 / 1.4
    S = np.full((12, 12), 0.2)
    S[np.arange(6), np.arange(6)] = 0.8
    r = interval_table(S, [0.6], icc=0.2).iloc[0]
    n = 12 / (1 + 11 * 0.2)
    lo, hi = (float(x) for x in clopper_pearson(0.5 * n, n))
    assert (r["hit_rate_icc_low"], r["hit_rate_icc_high"]) == pytest.approx((lo, hi))
    groups = [f"g{i % 4}" for i in range(12)]
    r = interval_table(S, [0.6], icc=0.2, groups_a=groups, groups_b=groups).iloc[0]
    n = 12 / (1 + 2 * 0.2)
    lo, hi = (float(x) for x in clopper_pearson(0.5 * n, n))
    assert (r["precision_icc_low"], r["precision_icc_high"]) == pytest.approx((lo, hi))
    with pytest.raises(ValueError, match="icc"):
        interval_table(S, [0.6], icc=1.0)
