"""Grounded agreement on a hand-computed table (6 segments; A: a1, a2; B: b1, b2, b3).

segment   0  1  2  3  4  5
A         a1 a1 a1 a2 a2 -
B         b1 b1 b3 b2 b2 b2
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import adjusted_mutual_info_score

from themesim.metrics.grounding import (
    alpha_mapped,
    grounding,
    iou_matrix,
    kappa,
    kappa_counts,
    label_matrix,
    top1,
)

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
    row, pairs = grounding(A, B, ta, tb, S, A_IDS, B_IDS, min_iou=0.5, threshold=0.5)
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
    strict, _ = grounding(A, B, ta, tb, S, A_IDS, B_IDS, min_iou=0.7, threshold=0.85)
    assert strict["grounded_hungarian_f1"] == 0.0
    assert strict["text_hungarian_f1"] == pytest.approx(0.4)


def test_identical_partitions_agree_fully():
    A = label_matrix(LABELS_A, SEGMENTS, A_IDS)
    ta = top1(LABELS_A, SEGMENTS, A_IDS)
    row, _ = grounding(A, A, ta, ta, np.eye(2), A_IDS, A_IDS, min_iou=0.5, threshold=0.5)
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


def test_bootstrap_is_seeded_and_brackets_the_estimate(data):
    A, B, ta, tb = data
    kw = dict(min_iou=0.5, threshold=0.5, n_boot=50, seed=3)
    r1, _ = grounding(A, B, ta, tb, S, A_IDS, B_IDS, **kw)
    r2, _ = grounding(A, B, ta, tb, S, A_IDS, B_IDS, **kw)
    assert r1 == r2
    assert r1["data_coverage_a_ci_low"] <= 5 / 6 <= r1["data_coverage_a_ci_high"]
    assert r1["data_coverage_b_ci_low"] == r1["data_coverage_b_ci_high"] == 1.0
    r3, _ = grounding(A, B, ta, tb, S, A_IDS, B_IDS, **{**kw, "seed": 4})
    assert r3 != r1


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
    view = grounding_view({"m": spec}, tmp_path, tmp_path, lambda *a: None)
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

    from themesim.metrics.grounding import partition_scores

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


def test_bootstrap_equals_resampling_the_rows_bit_for_bit():
    """The weighted-count bootstrap gives the same intervals, to the last bit, as the
    statistics computed on each resample's rows (A[idx], B[idx]) with the same draws."""
    from themesim.metrics import grounding as g

    rng = np.random.default_rng(11)
    n, na, nb = 90, 5, 4
    top_a = rng.integers(-1, na, n)
    top_b = np.where(rng.random(n) < 0.6, np.clip(top_a, -1, nb - 1), rng.integers(-1, nb, n))
    A = (rng.random((n, na)) < 0.15) | (top_a[:, None] == np.arange(na))
    B = (rng.random((n, nb)) < 0.15) | (top_b[:, None] == np.arange(nb))
    S = rng.random((na, nb))
    for tpairs in (g.text_pairs(S, 0.3), None):
        got = g._bootstrap(A, B, top_a, top_b, S, tpairs, 0.2, 60, 5, 0.95)
        draws = np.random.default_rng(5)
        values = []
        for _ in range(60):
            idx = draws.integers(0, n, size=n)
            res, _ = g._summary(A[idx], B[idx], top_a[idx], top_b[idx], S, tpairs, 0.2)
            values.append([res[m] for m in g.CI_METRICS])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN text columns
            # the percentiles as the code takes them: 50 * (1 - 0.95) is not exactly 2.5
            lo, hi = np.nanpercentile(np.array(values), [50 * (1 - 0.95), 50 * 1.95], axis=0)
        want = {}
        for m, a, b in zip(g.CI_METRICS, lo, hi, strict=True):
            want[f"{m}_ci_low"], want[f"{m}_ci_high"] = float(a), float(b)
        assert got.keys() == want.keys()
        for k in want:  # NaN == NaN for the text columns without text pairs
            assert got[k] == want[k] or (math.isnan(got[k]) and math.isnan(want[k])), k
        assert not math.isnan(got["ami_ci_low"]) and got["ami_ci_low"] < got["ami_ci_high"]


def test_kappa_counts_array_equals_statsmodels_bit_for_bit():
    """Every 2×2 table of up to 16 segments, and random larger ones: the array form gives
    statsmodels' κ to the last bit, and NaN exactly where κ is undefined."""
    from themesim.metrics.grounding import kappa_counts_array

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

    from themesim.metrics.grounding import _spearman, _spearman_ranked

    rng = np.random.default_rng(9)
    for _ in range(300):
        shape = tuple(int(v) for v in rng.integers(1, 9, 2))
        S = np.round(rng.random(shape), int(rng.integers(1, 4)))  # ties, as real S has
        iou = np.round(rng.random(shape), int(rng.integers(0, 3)))  # often constant
        x = S.ravel()
        rank_x = rankdata(x) if x.size >= 3 and np.ptp(x) > 0 else None
        got, want = _spearman_ranked(rank_x, iou), _spearman(S, iou)
        assert got == want or (math.isnan(got) and math.isnan(want)), (S, iou)
