"""Grounded agreement on a hand-computed table (6 segments; A: a1, a2; B: b1, b2, b3).

segment   0  1  2  3  4  5
A         a1 a1 a1 a2 a2 -
B         b1 b1 b3 b2 b2 b2
"""

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import adjusted_mutual_info_score

from themesim.metrics.grounding.grounding import (
    GroundingSettings,
    SetLabels,
    grounding,
    label_matrix,
    top1,
)
from themesim.metrics.grounding.grounding_stats import alpha_mapped, iou_matrix, kappa, kappa_counts
from themesim.metrics.grounding.labelings import Labelings

SEGMENTS = pd.DataFrame({"transcript": ["t"] * 6, "segment": range(6)})
A_IDS, B_IDS = ["a1", "a2"], ["b1", "b2", "b3"]
LABELS_A = pd.DataFrame(
    {"transcript": "t", "segment": [0, 1, 2, 3, 4], "theme_id": ["a1", "a1", "a1", "a2", "a2"]}
)
LABELS_B = pd.DataFrame(
    {
        "transcript": "t",
        "segment": [0, 1, 2, 3, 4, 5],
        "theme_id": ["b1", "b1", "b3", "b2", "b2", "b2"],
    }
)
# Text similarity: the text Hungarian pairs at 0.5 are (a1, b3) and (a2, b2).
S = np.array([[0.6, 0.1, 0.9], [0.2, 0.8, 0.3]])


@pytest.fixture
def data():
    A = label_matrix(LABELS_A, SEGMENTS, A_IDS)
    B = label_matrix(LABELS_B, SEGMENTS, B_IDS)
    return A, B, top1(LABELS_A, SEGMENTS, A_IDS), top1(LABELS_B, SEGMENTS, B_IDS)


def test_iou_and_kappa_by_hand(data):
    A, B, _, _ = data
    both, n_a, n_b, iou = iou_matrix(A, B)
    assert n_a.tolist() == [3, 2] and n_b.tolist() == [2, 3, 1]
    assert both.tolist() == [[2, 0, 1], [0, 2, 0]]
    # a1b1: 2 / (3 + 2 - 2); a1b3: 1 / (3 + 1 - 1); a2b2: 2 / (2 + 3 - 2)
    np.testing.assert_allclose(iou, [[2 / 3, 0, 1 / 3], [0, 2 / 3, 0]])
    # a1 vs b1: p_o = 5/6, p_e = .5*(1/3) + .5*(2/3) = 1/2 -> κ = (5/6 - 1/2) / (1/2) = 2/3
    assert kappa(A[:, 0], B[:, 0]) == pytest.approx(2 / 3)
    # a1 vs b3: p_o = 4/6, p_e = .5*(1/6) + .5*(5/6) = 1/2 -> κ = 1/3
    assert kappa(A[:, 0], B[:, 2]) == pytest.approx(1 / 3)
    assert math.isnan(kappa(np.zeros(4, bool), np.zeros(4, bool)))
    # statsmodels on the 2x2 table (used for every pair and resample) equals scikit-learn
    both, n_a, n_b, _ = iou_matrix(A, B)
    for i in range(2):
        for j in range(3):
            want = kappa(A[:, i], B[:, j])
            assert kappa_counts(both[i, j], n_a[i], n_b[j], 6) == pytest.approx(want)
    assert math.isnan(kappa_counts(0, 0, 0, 6)) and math.isnan(kappa_counts(6, 6, 6, 6))


def test_krippendorff_alpha_by_hand(data):
    _, _, ta, tb = data
    assert ta.tolist() == [0, 0, 0, 1, 1, -1] and tb.tolist() == [0, 0, 2, 1, 1, 1]
    # B mapped: b3 -> a1 (0), b2 -> a2 (1), b1 unpaired -> own category 2: [2, 2, 0, 1, 1, 1].
    # Pairable units 0-4; coincidences o00 = 2, o02 = o20 = 2, o11 = 4; n0 = 4, n1 = 4, n2 = 2,
    # n = 10; α = 1 - (n - 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k = 1 - 9 * 4 / 64 = 0.4375.
    assert alpha_mapped(ta, tb, [(0, 2), (1, 1)]) == pytest.approx(0.4375)


def test_grounding_row_and_pairs(data):
    A, B, ta, tb = data
    a, b = SetLabels(A, ta, A_IDS), SetLabels(B, tb, B_IDS)
    # one transcript: the chance-corrected figures by hand, before they are withheld
    st = GroundingSettings(min_iou=0.5, threshold=0.5, withhold_biased=False)
    row, pairs = grounding(a, b, S, st)
    assert row["n_segments"] == 6 and row["n_both_labelled"] == 5
    assert row["data_coverage_a"] == pytest.approx(5 / 6)
    assert row["data_coverage_b"] == 1.0
    # contingency over segments 0-4: Σ C(n_ij, 2) = 2, Σ C(a_i, 2) = 4, Σ C(b_j, 2) = 2,
    # C(5, 2) = 10: ARI = (2 - 0.8) / (3 - 0.8) = 6/11
    assert row["ari"] == pytest.approx(6 / 11)
    assert row["ami"] == pytest.approx(adjusted_mutual_info_score([0, 0, 0, 1, 1], [0, 0, 2, 1, 1]))
    # IoU Hungarian: (a1, b1) + (a2, b2) = 4/3, both >= 0.5 -> F1 = 2 * 2 / (2 + 3)
    assert row["grounded_hungarian_n_matched"] == 2
    assert row["grounded_hungarian_f1"] == pytest.approx(0.8)
    assert row["text_hungarian_f1"] == pytest.approx(0.8)
    # text pairs (a1, b3) κ = 1/3 and (a2, b2) κ = 2/3
    assert row["text_pairs"] == 2
    assert row["text_pairs_median_kappa"] == pytest.approx(0.5)
    assert row["text_pairs_share_kappa_ge_0_4"] == 0.5
    assert row["text_pairs_krippendorff_alpha"] == pytest.approx(0.4375)
    # ranks of S [4,1,6,2,5,3] vs IoU [5.5,2,4,2,5.5,2]: 12 / sqrt(17.5 * 15)
    assert row["text_data_spearman"] == pytest.approx(12 / math.sqrt(17.5 * 15))
    assert pairs.shape == (6, 9)
    r = pairs.set_index(["a_id", "b_id"])
    assert r.loc[("a1", "b3"), ["n_a", "n_b", "n_both"]].tolist() == [3, 1, 1]
    assert r.loc[("a1", "b3"), "text_pair"] and not r.loc[("a1", "b1"), "text_pair"]
    assert r.loc[("a2", "b2"), "kappa"] == pytest.approx(2 / 3)
    # a stricter min_iou drops both grounded pairs; a higher threshold leaves one text pair
    strict, _ = grounding(a, b, S, GroundingSettings(min_iou=0.7, threshold=0.85))
    assert strict["grounded_hungarian_f1"] == 0.0
    assert strict["text_hungarian_f1"] == pytest.approx(0.4)


def test_identical_partitions_agree_fully():
    A = label_matrix(LABELS_A, SEGMENTS, A_IDS)
    ta = top1(LABELS_A, SEGMENTS, A_IDS)
    a = SetLabels(A, ta, A_IDS)
    # one transcript: by hand
    st = GroundingSettings(min_iou=0.5, threshold=0.5, withhold_biased=False)
    row, _ = grounding(a, a, np.eye(2), st)
    assert row["ami"] == pytest.approx(1.0) and row["ari"] == pytest.approx(1.0)
    assert row["grounded_hungarian_f1"] == 1.0
    assert row["text_pairs_krippendorff_alpha"] == pytest.approx(1.0)
    assert row["text_pairs_median_kappa"] == pytest.approx(1.0)


def test_top1_takes_the_highest_score_then_the_first_theme():
    labels = pd.DataFrame(
        {
            "transcript": "t",
            "segment": [0, 0, 1, 1],
            "theme_id": ["b3", "b1", "b2", "b1"],
            "score": [0.9, 0.4, 0.5, 0.5],
        }
    )
    assert top1(labels, SEGMENTS, B_IDS).tolist() == [2, 0, -1, -1, -1, -1]


def test_label_matrix_and_top1_by_hand_across_transcripts():
    """Rows follow the segments table's order (not the labels'), segment numbers read back as
    floats match, a NaN or -inf score never wins, an unknown segment or theme is named."""
    segments = pd.DataFrame({"transcript": ["u", "u", "t", "t"], "segment": [0, 1, 0, 1]})
    labels = pd.DataFrame(
        {
            "transcript": ["t", "u", "u", "t", "t"],
            "segment": [1.0, 0.0, 0.0, 0.0, 0.0],
            "theme_id": ["b2", "b3", "b1", "b3", "b1"],
            "score": [0.3, float("nan"), -np.inf, 0.7, 0.7],
        }
    )
    X = label_matrix(labels, segments, B_IDS)
    assert X.astype(int).tolist() == [[1, 0, 1], [0, 0, 0], [1, 0, 1], [0, 1, 0]]
    # u/0: NaN and -inf only, so no top-1; t/0: a tie at 0.7 goes to b1, listed first
    assert top1(labels, segments, B_IDS).tolist() == [-1, -1, 0, 1]
    for bad in ({"segment": 5.0}, {"theme_id": "b9"}, {"transcript": "v"}):
        wrong = labels.assign(**bad).iloc[:1]
        with pytest.raises(ValueError, match="is not a known segment and theme"):
            label_matrix(wrong, segments, B_IDS)


def test_label_matrix_and_top1_match_a_loop_over_labels():
    """Seeded labels with repeats and ties on 300 segments of 7 transcripts: the same as one
    dictionary look-up per label."""
    rng = np.random.default_rng(3)
    segments = pd.DataFrame(
        {"transcript": np.repeat([f"t{i}" for i in range(7)], 43)[:300], "segment": 0}
    )
    segments["segment"] = segments.groupby("transcript").cumcount()
    ids = [f"x{i}" for i in range(9)]
    pick = rng.integers(0, 300, size=900)
    labels = pd.DataFrame(
        {
            "transcript": segments["transcript"].to_numpy()[pick],
            "segment": segments["segment"].to_numpy()[pick],
            "theme_id": rng.choice(ids, size=900),
            "score": rng.choice([0.2, 0.5, 0.5, 0.9, np.nan], size=900),
        }
    )
    rows = zip(segments.transcript, segments.segment, strict=True)
    pos = {(t, s): i for i, (t, s) in enumerate(rows)}
    want_x = np.zeros((300, 9), dtype=bool)
    want_top = np.full(300, -1)
    best = np.full(300, -np.inf)
    for t, s, tid, sc in labels.itertuples(index=False, name=None):
        i, j = pos[(t, s)], ids.index(tid)
        want_x[i, j] = True
        if sc > best[i] or (sc == best[i] and j < want_top[i]):
            want_top[i], best[i] = j, sc
    assert np.array_equal(label_matrix(labels, segments, ids), want_x)
    assert np.array_equal(top1(labels, segments, ids), want_top)


def test_jackknife_by_hand(data):
    """Transcripts {0, 1}, {2, 3}, {4, 5}: coverage of A leaving each out is 3/4, 3/4, 1;
    mean 5/6, Σ (r − mean)² = 1/24, se² = (2/3)(1/24) = 1/36, se = 1/6; t(2) = 4.3027."""
    A, B, ta, tb = data
    a, b = SetLabels(A, ta, A_IDS), SetLabels(B, tb, B_IDS)
    st = GroundingSettings(min_iou=0.5, threshold=0.5, intervals=True)
    t = np.array([0, 0, 1, 1, 2, 2])
    r1, _ = grounding(a, b, S, st, t)
    assert r1["n_transcripts"] == 3 and r1["ci_method"].startswith("transcript_jackknife; ")
    h = 4.302652729749464 / 6
    assert r1["data_coverage_a_ci_low"] == pytest.approx(5 / 6 - h)
    assert r1["data_coverage_a_ci_high"] == 1.0  # 5/6 + h clipped to the share's range
    # B labels every segment in every replicate: no spread, the value is certain here
    assert r1["data_coverage_b_ci_low"] == r1["data_coverage_b_ci_high"] == 1.0
    # deterministic: no seed reaches the jackknife
    r2, _ = grounding(a, b, S, replace(st, seed=9), t)
    assert r1 == r2
    # one transcript: no transcript-level interval, and the row says why
    r3, _ = grounding(a, b, S, st)
    assert r3["ci_method"] == "none (one transcript)" and math.isnan(r3["ami_ci_low"])


def test_chance_corrected_figures_are_refused_over_one_transcript(data):
    """Regression (issue 36): with one transcript the grounding row showed "AMI 1.00" beside
    text F1 0.00, with no interval to judge it by. AMI, ARI, κ and α (and their intervals and
    p values) are NaN below CHANCE_MIN_TRANSCRIPTS, and withheld_reason says which and why;
    the shares and counts stay. From 2 transcripts they are given and the reason is empty."""
    from themesim.metrics.grounding.grounding import CHANCE_CORRECTED, CHANCE_MIN_TRANSCRIPTS

    assert CHANCE_MIN_TRANSCRIPTS == 2
    A, B, ta, tb = data
    a, b = SetLabels(A, ta, A_IDS), SetLabels(B, tb, B_IDS)
    st = GroundingSettings(min_iou=0.5, threshold=0.5, intervals=True, n_perm=20, seed=1)
    one, _ = grounding(a, b, S, st)
    raw, _ = grounding(a, b, S, replace(st, withhold_biased=False))
    assert np.isfinite(raw["ami"])  # computed, then refused
    assert one["n_transcripts"] == 1
    for m in CHANCE_CORRECTED:
        assert math.isnan(one[m]), m
        for end in ("_ci_low", "_ci_high", "_p"):  # those it has
            assert math.isnan(one.get(f"{m}{end}", math.nan)), f"{m}{end}"
    reason = one["withheld_reason"]
    assert reason.startswith("ami, ari, text_pairs_median_kappa")
    assert "not given over 1 transcript(s)" in reason and "at least 2" in reason
    for m in ("data_coverage_a", "grounded_hungarian_f1", "text_hungarian_f1", "n_both_labelled"):
        assert one[m] == raw[m]  # plain shares and counts stay
    two, _ = grounding(a, b, S, st, np.array([0] * 3 + [1] * 3))
    assert two["withheld_reason"] == "" and np.isfinite(two["ami"])


def test_biased_intervals_are_withheld_and_named():
    """Regression (issue 23): the median κ of the text pairs and the text–data ρ got a
    transcript-jackknife interval that covered 0.62–0.97 (κ, 4–6 transcripts) and
    0.82–0.99 (ρ, any number): noisy IoU and κ pull both towards 0. The row now gives NaN
    for them, never silently: ci_method names them and why. From 20 transcripts the median
    κ's jackknife holds (0.96–1.00) and is given; ρ's never is."""
    from themesim.metrics.grounding.grounding_intervals import (
        CI_METRICS,
        NOT_GIVEN,
        withheld_intervals,
    )

    rng = np.random.default_rng(5)
    na = nb = 4

    def study(n_transcripts):
        n = 20 * n_transcripts
        top_a = rng.integers(0, na, n)
        top_b = np.where(rng.random(n) < 0.6, top_a, rng.integers(0, nb, n))
        A, B = top_a[:, None] == np.arange(na), top_b[:, None] == np.arange(nb)
        S = np.where(np.eye(na, dtype=bool), 0.8, rng.uniform(0.1, 0.4, (na, nb)))
        return A, B, top_a, top_b, S, np.repeat(np.arange(n_transcripts), 20)

    ids = [f"t{i}" for i in range(na)]
    st = GroundingSettings(min_iou=0.2, threshold=0.5, intervals=True)
    for G in (6, 20):
        A, B, ta, tb, S6, t = study(G)
        a, b = SetLabels(A, ta, ids), SetLabels(B, tb, ids)
        row, _ = grounding(a, b, S6, st, t)
        raw, _ = grounding(a, b, S6, replace(st, withhold_biased=False), t)
        assert row == raw | withheld_intervals(raw) | {"withheld_reason": ""}
        for m in CI_METRICS:  # every estimate is defined, and every raw interval given
            assert raw[f"{m}_ci_low"] <= raw[m] <= raw[f"{m}_ci_high"], m
        assert math.isnan(row["text_data_spearman_ci_low"])
        assert math.isnan(row["text_data_spearman_ci_high"])
        assert raw["ci_method"] == "transcript_jackknife"
        withheld = {"text_data_spearman"} | ({"text_pairs_median_kappa"} if G < 20 else set())
        for m in set(CI_METRICS) - withheld:
            assert row[f"{m}_ci_low"] == raw[f"{m}_ci_low"], m
            assert row[f"{m}_ci_high"] == raw[f"{m}_ci_high"], m
    # 6 transcripts: both named; 20: ρ alone
    A, B, ta, tb, S6, t = study(6)
    r6, _ = grounding(SetLabels(A, ta, ids), SetLabels(B, tb, ids), S6, st, t)
    assert math.isnan(r6["text_pairs_median_kappa_ci_low"])
    assert r6["ci_method"] == (
        "transcript_jackknife; text_pairs_median_kappa (under 20 transcripts), "
        f"text_data_spearman: {NOT_GIVEN}"
    )
    assert row["ci_method"] == f"transcript_jackknife; text_data_spearman: {NOT_GIVEN}"
    assert NOT_GIVEN == "not given: biased by segment noise, see docs/validity.md"


def test_jackknife_interval_by_hand():
    from themesim.metrics.grounding.grounding_intervals import jackknife_interval

    # replicates 1, 2, 3: mean 2, Σ (r − 2)² = 2, se² = (2/3)·2 = 4/3; t(2) = 4.3027
    h = 4.302652729749464 * math.sqrt(4 / 3)
    assert jackknife_interval(2.5, [1, 2, 3]) == pytest.approx((2.5 - h, 2.5 + h))
    # clipped to the bounds, never past the estimate; undefined replicates left out
    assert jackknife_interval(0.9, [0.5, np.nan, 0.9, 1.0], bounds=(0, 1))[1] == 1.0
    assert jackknife_interval(1.2, [1.2, 1.2], bounds=(0, 1)) == (1.2, 1.2)
    assert all(math.isnan(v) for v in jackknife_interval(0.5, [0.5, np.nan]))


def test_independent_labelings_intervals_contain_their_estimate():
    """Regression: the segment bootstrap gave two independent labelings of 84 segments AMI
    -0.026 with [0.067, 0.224] (resampled segments repeat, and repeats always agree). The
    transcript jackknife's interval always holds its estimate, and the permutation test
    finds no agreement above chance."""
    from themesim.metrics.grounding.grounding_intervals import BIASED_CI_MIN_TRANSCRIPTS, CI_METRICS

    rng = np.random.default_rng(23)
    n, na, nb = 84, 5, 6
    transcripts = np.repeat(np.arange(6), 14)
    top_a = np.where(rng.random(n) < 0.7, rng.integers(0, na, n), -1)
    top_b = np.where(rng.random(n) < 0.7, rng.integers(0, nb, n), -1)
    A, B = top_a[:, None] == np.arange(na), top_b[:, None] == np.arange(nb)
    Sab = rng.random((na, nb))
    a = SetLabels(A, top_a, [f"a{i}" for i in range(na)])
    b = SetLabels(B, top_b, [f"b{j}" for j in range(nb)])
    st = GroundingSettings(min_iou=0.2, threshold=0.5, intervals=True, n_perm=199, seed=1)
    row, _ = grounding(a, b, Sab, st, transcripts)
    for m in CI_METRICS:
        if not math.isnan(row[m]) and m not in BIASED_CI_MIN_TRANSCRIPTS:
            assert row[f"{m}_ci_low"] <= row[m] <= row[f"{m}_ci_high"], m
    assert row["ami_ci_low"] < 0.05 < row["ami_ci_high"]
    # a p is printed only for the statistics whose test held on every serial null; the
    # others are NaN (descriptions), and p_method says which are given
    from themesim.metrics.grounding.grounding_shift import PRINTED_P, TEST_METRICS

    raw, _ = grounding(a, b, Sab, replace(st, withhold_biased=False), transcripts)
    assert raw["ami_p"] > 0.05 and raw["ari_p"] > 0.05  # measured for the suite
    for m in TEST_METRICS:
        assert math.isnan(row[f"{m}_p"]) == (m not in PRINTED_P), m
    if PRINTED_P:
        assert row["p_method"] == (
            "run_preserving_cyclic_shift; p given for: "
            + ", ".join(PRINTED_P)
            + " (level held on every serial null)"
        )
        assert row["n_permutations"] == 199
    else:  # no p is given, so none is drawn
        assert row["p_method"] == (
            "run_preserving_cyclic_shift; p given for: none (no statistic held its level on "
            "every serial null), not drawn"
        )
        assert row["n_permutations"] == 0
    assert raw["p_method"] == "run_preserving_cyclic_shift" and raw["n_permutations"] == 199


def test_permutation_p_enumerated_exactly():
    """Two transcripts of two segments; A and B each one theme on segments 0 and 2.
    B's runs (an uncoded segment reads as the code before it) are one code per transcript,
    so a rotation may start anywhere; two rows are not reflected: 2 · 2 = 4 ways:
    B = 1010 (identity): κ = 1, IoU 1; 0110 or 1001: κ = 0, IoU 1/3; 0101: κ = −1, IoU 0.
    κ reaches the observed 1 once: p = 1/4. Grounded F1 (min_iou 0.2) is 1 in three of
    them: p = 3/4. ρ needs 3 pairs and α two categories: no p."""
    from themesim.metrics.grounding.grounding_shift import permutation_test
    from themesim.metrics.grounding.grounding_stats import text_pairs

    A = np.array([[1], [0], [1], [0]], dtype=bool)
    top = np.array([0, -1, 0, -1])
    S1 = np.array([[0.9]])
    lab = Labelings(A, A.copy(), top, top.copy(), S1, text_pairs(S1, 0.5), 0.2)
    strata = np.array([0, 0, 1, 1])
    out = permutation_test(lab, strata, n_perm=10, seed=0)
    assert out["p_method"] == "run_preserving_cyclic_shift_exact"
    assert out["n_permutations"] == 4
    assert out["text_pairs_median_kappa_p"] == 0.25
    assert out["grounded_hungarian_f1_p"] == 0.75
    assert math.isnan(out["text_data_spearman_p"]) and math.isnan(
        out["text_pairs_krippendorff_alpha_p"]
    )
    # fewer draws than arrangements: Monte Carlo, p = (1 + hits) / (1 + draws) ≥ 1 / 4
    mc = permutation_test(lab, strata, n_perm=3, seed=0)
    assert mc["p_method"] == "run_preserving_cyclic_shift" and mc["n_permutations"] == 3
    assert mc["text_pairs_median_kappa_p"] in (0.25, 0.5, 0.75, 1.0)
    assert mc == permutation_test(lab, strata, n_perm=3, seed=0)  # seeded


def _runs(x: np.ndarray) -> list[tuple[int, int]]:
    """(code, length) of each run of x, in order."""
    starts = np.r_[0, np.flatnonzero(x[1:] != x[:-1]) + 1, x.size]
    return list(zip(x[starts[:-1]].tolist(), np.diff(starts).tolist(), strict=True))


def test_run_preserving_starts_by_hand():
    from themesim.metrics.grounding.grounding_shift import run_keys, run_preserving_starts

    # ends differ: start at a run's start, the three runs in the same cyclic order
    assert run_preserving_starts(np.array([0, 0, 1, 1, 1, 2])).tolist() == [0, 2, 5]
    # ends the same (0 wraps round): start inside the wrapping run only
    assert run_preserving_starts(np.array([0, 0, 1, 1, 0, 0])).tolist() == [0, 1, 5]
    # starting at the last run's start would join the two end runs: not allowed
    assert run_preserving_starts(np.array([0, 0, 1, 1, 0])).tolist() == [0, 1]
    assert run_preserving_starts(np.array([3, 3, 3])).tolist() == [0, 1, 2]
    # uncoded segments read as the code before them (the first code at a stratum's start)
    keys = run_keys(np.array([-1, 2, -1, 2, 4, -1, -1, -1]), np.array([0] * 5 + [1] * 3))
    assert keys.tolist() == [2, 2, 2, 2, 4, -1, -1, -1]


def test_shifts_keep_counts_and_runs_of_every_stratum():
    """Every arrangement moves B's rows within their stratum, keeps each stratum's label
    counts and B's runs (codes and lengths as a multiset; the run that wraps round a
    stratum may be split anew, no other run), reversed or not."""
    from themesim.metrics.grounding.grounding_shift import _Shifts, run_keys

    rng = np.random.default_rng(5)
    strata = np.repeat([0, 1, 2, 3], [9, 14, 2, 1])
    top_b = np.repeat(rng.integers(-1, 4, 12), rng.integers(1, 4, 12))[: strata.size]
    top_b = np.r_[top_b, np.full(strata.size - top_b.size, 1)]
    B = top_b[:, None] == np.arange(4)
    key = run_keys(top_b, strata)
    shifts = _Shifts(B, top_b, strata)
    seen = set()
    for perm in list(shifts.draws(300, 1)) + list(shifts.all()):
        assert (strata[perm] == strata).all() and sorted(perm) == list(range(strata.size))
        for s in np.unique(strata):
            rows = np.flatnonzero(strata == s)
            old, new = key[rows], key[perm[rows]]
            assert (
                np.bincount(top_b[perm[rows]] + 1, minlength=5).tolist()
                == np.bincount(top_b[rows] + 1, minlength=5).tolist()
            )
            r_old, r_new = _runs(old), _runs(new)
            assert len(r_new) == len(r_old)
            if old[0] != old[-1]:  # no run wraps round: the runs are the same runs
                assert sorted(r_new) == sorted(r_old) or sorted(r_new) == sorted(r_old[::-1])
            else:  # the end runs (one code) split anew, the inner runs kept
                assert sorted(r_new[1:-1]) == sorted(r_old[1:-1])
                assert r_new[0][0] == r_new[-1][0] == old[0]
        seen.add(perm.tobytes())
    assert len(seen) == shifts.total  # every arrangement turns up among the draws


def test_shift_p_by_hand_where_permutation_finds_agreement():
    """One transcript of 40 segments, each coding one change of topic: A 0×20 1×20, B
    0×25 1×15 (AMI 0.553; moving segments one by one almost never gets as far, p ≈ 0).
    B's runs allow 4 arrangements: B as it is, rotated to 1×15 0×25, and the two
    reflections, which give the same two sequences. 1×15 0×25 against A is the 2×2 table
    [[5, 15], [20, 0]], the same partition: AMI 0.553 again, p = 4/4 (exact)."""
    from themesim.metrics.grounding.grounding_shift import permutation_test
    from themesim.metrics.grounding.grounding_stats import text_pairs
    from themesim.metrics.grounding.partition import partition_scores

    top_a = np.repeat([0, 1], [20, 20])
    top_b = np.repeat([0, 1], [25, 15])
    ami = partition_scores(np.array([[20, 0], [5, 15]]))[0]
    assert ami == pytest.approx(0.5530, abs=1e-4)
    assert partition_scores(np.array([[5, 15], [20, 0]]))[0] == ami
    A, B = top_a[:, None] == np.arange(2), top_b[:, None] == np.arange(2)
    S = np.array([[0.9, 0.1], [0.1, 0.9]])
    lab = Labelings(A, B, top_a, top_b, S, text_pairs(S, 0.5), 0.2)
    out = permutation_test(lab, np.zeros(40, int), n_perm=99, seed=0)
    assert out["p_method"] == "run_preserving_cyclic_shift_exact"
    assert out["n_permutations"] == 4
    assert out["ami_p"] == 1.0
    # α maps B's codes onto A's through the text pairs: B as it is agrees on 35 of 40
    # segments (α 0.749), rotated on 5 (α −0.756): reached by 2 of 4
    assert out["text_pairs_krippendorff_alpha_p"] == 0.5


def test_strongly_dependent_null_is_not_rejected():
    """Regression (inference issue): two independent codings in topic blocks (stay 0.9, 3
    transcripts; validate/grounding.py's serial_stay0.9). Moving B's segments one by one
    within the transcript calls their agreement far above chance (p 0.005, the least 199
    draws give); rotating B's runs does not."""
    from themesim.metrics.grounding.grounding_shift import _Perm, permutation_test
    from themesim.metrics.grounding.grounding_stats import text_pairs
    from themesim.validate import grounding as vg

    S = vg.similarity(np.random.default_rng(0))
    d = vg.simulate(np.random.default_rng(1), "serial_stay0.9", 3)
    lab = Labelings(d["A"], d["B"], d["top_a"], d["top_b"], S, text_pairs(S, 0.5), 0.2)
    out = permutation_test(lab, d["t"], n_perm=199, seed=0)
    assert out["ami_p"] > 0.3 and out["ari_p"] > 0.3
    ctx = _Perm(lab)
    observed = ctx.stats(np.arange(len(d["t"])))[0]
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(199):
        perm = np.arange(len(d["t"]))
        for t in np.unique(d["t"]):
            rows = np.flatnonzero(d["t"] == t)
            perm[rows] = rng.permutation(rows)
        hits += ctx.stats(perm)[0] >= observed
    assert (1 + hits) / 200 <= 0.01


def test_iou_interval_is_not_empty_at_zero():
    """A pair that never meets in the sample (IoU 0 over a union of 4 segments): Wilson's
    upper bound z² / (n + z²) at n = 4, not the jackknife's [0, 0]."""
    from scipy.stats import norm

    from themesim.metrics.grounding.grounding_intervals import iou_intervals

    A = np.array([[1], [1], [0], [0]], dtype=bool)
    B = np.array([[0], [0], [1], [1]], dtype=bool)
    lo, hi = iou_intervals(A, B, np.array([0, 1, 0, 1]))
    z2 = norm.ppf(0.975) ** 2
    assert lo[0, 0] == 0 and hi[0, 0] == pytest.approx(z2 / (4 + z2))


def test_report_section_lists_shared_and_single_passages(tmp_path):
    from themesim.report.grounding_section import grounding_view
    from themesim.report.summary import _env

    seg = pd.DataFrame(
        {
            "transcript": ["t"] * 3,
            "segment": [0, 1, 2],
            "speaker": ["S"] * 3,
            "text": ["<b>work</b> shifts", "bills " * 60, "sleep"],
            "start": [float("nan")] * 3,
            "end": [float("nan")] * 3,
        }
    )
    seg.to_parquet(tmp_path / "segments.parquet")
    (tmp_path / "seg").mkdir()
    (tmp_path / "g").mkdir()
    la = pd.DataFrame({"transcript": "t", "segment": [0, 1], "theme_id": ["a1", "a1"]})
    lb = pd.DataFrame({"transcript": "t", "segment": [0, 2], "theme_id": ["b1", "b1"]})
    la.to_parquet(tmp_path / "seg" / "A.parquet")
    lb.to_parquet(tmp_path / "seg" / "B.parquet")
    long = pd.DataFrame(
        {
            "a_id": ["a1"],
            "b_id": ["b1"],
            "iou": [1 / 3],
            "kappa": [0.0],
            "similarity": [0.8],
            "text_pair": [True],
        }
    )
    long.to_parquet(tmp_path / "g" / "A__vs__B.parquet")
    row = {
        c: 0.5
        for c in [
            "text_hungarian_f1",
            "grounded_hungarian_f1",
            "ami",
            "text_pairs_median_kappa",
            "text_pairs_krippendorff_alpha",
            "text_data_spearman",
            "data_coverage_a",
            "data_coverage_b",
        ]
    }
    pd.DataFrame([{"set_a": "A", "set_b": "B"} | row]).to_csv(tmp_path / "g.csv", index=False)
    spec = {
        "grounding_csv": tmp_path / "g.csv",
        "grounding_dir": tmp_path / "g",
        "segments_dir": tmp_path / "seg",
        "segments_parquet": tmp_path / "segments.parquet",
    }
    view = grounding_view({"m": spec}, tmp_path, tmp_path, lambda *a, **kw: None)
    assert view["rows"][0][:5] == ["m", "A vs B", "mixed", "0.50", "0.50"]  # no basis column: mixed
    (p,) = view["methods"][0]["comparisons"][0]["pairs"]
    assert p["n"] == [1, 1, 1] and p["iou"] == "0.33"
    assert p["both"] == ["t #0: <b>work</b> shifts"]
    assert p["only_b"] == ["t #2: sleep"]
    assert len(p["only_a"][0]) == 160 and p["only_a"][0].endswith("…")
    # the HTML template escapes the excerpts
    html = _env(True).from_string("{% for x in xs %}{{ x }}{% endfor %}").render(xs=p["both"])
    assert "&lt;b&gt;work&lt;/b&gt;" in html


def test_partition_scores_equal_scikit_learn_bit_for_bit():
    """AMI and ARI from a contingency table (the bootstrap's weighted counts) are exactly
    scikit-learn's on the labelings, edge cases included: one label each side, one side
    constant, unused labels (zero rows and columns)."""
    from sklearn.metrics import adjusted_rand_score

    from themesim.metrics.grounding.partition import partition_scores

    rng = np.random.default_rng(7)
    cases = [([0, 0, 0], [1, 1, 1]), ([0, 0, 1], [2, 2, 2]), ([0, 1, 0, 1], [0, 1, 0, 1])]
    for _ in range(300):
        n = int(rng.integers(2, 120))
        x = rng.integers(0, int(rng.integers(1, 9)), n)
        y = rng.integers(0, int(rng.integers(1, 7)), n)
        if rng.random() < 0.3:  # correlated labelings, as matched theme sets give
            y = np.where(rng.random(n) < 0.7, x % 4, y)
        cases.append((x.tolist(), y.tolist()))
    for x, y in cases:
        C = np.zeros((10, 10), dtype=np.int64)  # room for labels that never occur
        np.add.at(C, (np.array(x), np.array(y)), 1)
        ami, ari = partition_scores(C)
        assert ami == adjusted_mutual_info_score(x, y), (x, y)
        assert ari == adjusted_rand_score(x, y), (x, y)


def test_permuted_statistics_equal_the_rows_permuted():
    """The permutation test's fast statistics (label counts fixed, contingency by bincount,
    α from the table) equal the full statistics on B's rows permuted: AMI, ARI, F1, κ and
    ρ to the last bit, α to rounding; and each leave-one-out IoU equals the IoU of the rows
    left."""
    from themesim.metrics.grounding import grounding_intervals as gi
    from themesim.metrics.grounding import grounding_shift as gs
    from themesim.metrics.grounding import grounding_stats as g

    rng = np.random.default_rng(11)
    n, na, nb = 90, 5, 4
    top_a = rng.integers(-1, na, n)
    top_b = np.where(rng.random(n) < 0.6, np.clip(top_a, -1, nb - 1), rng.integers(-1, nb, n))
    A = (rng.random((n, na)) < 0.15) | (top_a[:, None] == np.arange(na))
    B = (rng.random((n, nb)) < 0.15) | (top_b[:, None] == np.arange(nb))
    S = rng.random((na, nb))
    for tpairs in (g.text_pairs(S, 0.3), None):
        ctx = gs._Perm(Labelings(A, B, top_a, top_b, S, tpairs, 0.2))
        for _ in range(20):
            perm = rng.permutation(n)
            got = dict(zip(gs.TEST_METRICS, ctx.stats(perm), strict=True))
            want, _ = g.summary_row(A, B[perm], top_a, top_b[perm], S, tpairs, 0.2)
            for m in gs.TEST_METRICS:
                if m == "text_pairs_krippendorff_alpha":
                    assert got[m] == pytest.approx(want[m], abs=1e-12, nan_ok=True)
                else:
                    assert got[m] == want[m] or (math.isnan(got[m]) and math.isnan(want[m])), m
    transcripts = np.repeat(np.arange(5), 18)
    loo = gi._loo_iou(A, B, transcripts)
    for t in range(5):
        keep = transcripts != t
        assert np.array_equal(loo[t], g.iou_matrix(A[keep], B[keep])[3])


def test_fast_summary_equals_the_libraries_bit_for_bit():
    """The jackknife's replicates take AMI, ARI, κ and α from their tables (fast=True): every
    column equals the libraries' own to the last bit (α, the krippendorff package's, to
    1e-12), on random labelings with unlabelled segments, second labels, unused themes and
    text pairs or none."""
    from themesim.metrics.grounding import grounding_stats as g

    rng = np.random.default_rng(13)
    for _ in range(40):
        n, na, nb = int(rng.integers(2, 80)), int(rng.integers(1, 7)), int(rng.integers(1, 7))
        top_a = rng.integers(-1, na, n)
        top_b = np.where(rng.random(n) < 0.5, np.clip(top_a, -1, nb - 1), rng.integers(-1, nb, n))
        A = (rng.random((n, na)) < 0.1) | (top_a[:, None] == np.arange(na))
        B = (rng.random((n, nb)) < 0.1) | (top_b[:, None] == np.arange(nb))
        S = rng.random((na, nb))
        for tpairs in (g.text_pairs(S, 0.4), None):
            want, _ = g.summary_row(A, B, top_a, top_b, S, tpairs, 0.2)
            got, _ = g.summary_row(A, B, top_a, top_b, S, tpairs, 0.2, fast=True)
            assert got.keys() == want.keys()
            for k, v in want.items():
                if k == "text_pairs_krippendorff_alpha":
                    assert got[k] == pytest.approx(v, abs=1e-12, nan_ok=True)
                else:
                    assert got[k] == v or (math.isnan(got[k]) and math.isnan(v)), k


def test_alpha_from_table_equals_krippendorff():
    from themesim.metrics.grounding.grounding_stats import (
        alpha_from_table,
        alpha_mapped,
        text_pairs,
    )

    rng = np.random.default_rng(5)
    for _ in range(300):
        n, na, nb = int(rng.integers(2, 60)), int(rng.integers(1, 6)), int(rng.integers(1, 6))
        top_a = np.where(rng.random(n) < 0.7, rng.integers(0, na, n), -1)
        top_b = np.where(rng.random(n) < 0.7, rng.integers(0, nb, n), -1)
        tp = text_pairs(rng.random((na, nb)), 0.4)
        both = (top_a >= 0) & (top_b >= 0)
        C = np.zeros((na, nb), dtype=np.int64)
        np.add.at(C, (top_a[both], top_b[both]), 1)
        want = alpha_mapped(top_a, top_b, tp)
        got = alpha_from_table(C, tp) if C.sum() else math.nan
        assert got == pytest.approx(want, abs=1e-12, nan_ok=True), (C, tp)


def test_average_ranks_equal_scipy_bit_for_bit():
    from scipy.stats import rankdata

    from themesim.metrics.grounding.grounding_stats import average_ranks

    rng = np.random.default_rng(2)
    for _ in range(200):
        y = np.round(rng.random(int(rng.integers(1, 60))), int(rng.integers(0, 3)))
        assert np.array_equal(average_ranks(y), rankdata(y))


def test_kappa_counts_array_equals_statsmodels_bit_for_bit():
    """Every 2×2 table of up to 16 segments, and random larger ones: the array form gives
    statsmodels' κ to the last bit, and NaN exactly where κ is undefined."""
    from themesim.metrics.kappa import kappa_counts_array

    tables = [
        (both, a, b, n)
        for n in range(1, 17)
        for a in range(n + 1)
        for b in range(n + 1)
        for both in range(max(0, a + b - n), min(a, b) + 1)
    ]
    rng = np.random.default_rng(3)
    for _ in range(2000):
        n = int(rng.integers(17, 5000))
        a, b = (int(v) for v in rng.integers(0, n + 1, 2))
        tables.append((int(rng.integers(max(0, a + b - n), min(a, b) + 1)), a, b, n))
    for n in {t[3] for t in tables}:
        rows = [t for t in tables if t[3] == n]
        got = kappa_counts_array(
            [t[0] for t in rows], [t[1] for t in rows], [t[2] for t in rows], n
        )
        want = np.array([kappa_counts(*t) for t in rows])
        assert np.array_equal(got, want, equal_nan=True), n


def test_spearman_from_given_ranks_equals_scipy_bit_for_bit():
    from scipy.stats import rankdata

    from themesim.metrics.grounding.grounding_stats import _spearman, spearman_ranked

    rng = np.random.default_rng(9)
    for _ in range(300):
        shape = tuple(int(v) for v in rng.integers(1, 9, 2))
        S = np.round(rng.random(shape), int(rng.integers(1, 4)))  # ties, as real S has
        iou = np.round(rng.random(shape), int(rng.integers(0, 3)))  # often constant
        x = S.ravel()
        rank_x = rankdata(x) if x.size >= 3 and np.ptp(x) > 0 else None
        got, want = spearman_ranked(rank_x, iou), _spearman(S, iou)
        assert got == want or (math.isnan(got) and math.isnan(want)), (S, iou)


def test_alpha_mapped_maps_b_through_the_pairs_as_a_lookup_would():
    """B's labels mapped onto A's themes through the pairs (a B theme outside them its own
    category, an unlabelled segment missing): the same α as krippendorff on the mapping
    written out one segment at a time."""
    import krippendorff

    rng = np.random.default_rng(5)
    top_a, top_b = rng.integers(-1, 4, size=400), rng.integers(-1, 6, size=400)
    pairs = [(0, 2), (3, 0), (1, 5)]
    mapped = {b: a for a, b in pairs}
    b = [np.nan if v < 0 else mapped.get(int(v), 4 + int(v)) for v in top_b]
    a = [np.nan if v < 0 else float(v) for v in top_a]
    want = krippendorff.alpha(reliability_data=np.array([a, b]), level_of_measurement="nominal")
    assert alpha_mapped(top_a, top_b, pairs) == want
    # a B theme paired with a theme A never uses still maps onto it
    assert alpha_mapped(np.array([0, 0, 1, 1]), np.array([0, 0, 1, 1]), [(5, 1), (0, 0)]) < 1
