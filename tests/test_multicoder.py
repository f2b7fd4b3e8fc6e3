"""Agreement of 2, 3 and 5 coders from histograms (metrics/agreement/multicoder.py) against
statsmodels, the krippendorff package and hand computations."""

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa

from themesim.metrics.agreement.multicoder import histogram, multi_stats, segment_agreement


def _ratings(rng, m, n=60):
    base = rng.random(n) < 0.4
    flip = rng.random((m, n)) < 0.2
    return (base ^ flip).astype(int)  # m coders × n units, 0/1


@pytest.mark.parametrize("m", [2, 3, 5])
def test_against_the_libraries(m):
    rng = np.random.default_rng(m)
    R = _ratings(rng, m)
    k = R.sum(axis=0)
    h = np.bincount(k, minlength=m + 1)
    s = multi_stats(h)
    table = np.column_stack([m - k, k])  # units × categories
    assert s["fleiss_kappa"] == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    assert s["brennan_prediger"] == pytest.approx(fleiss_kappa(table, method="randolph"), abs=1e-12)
    assert s["alpha_binary_char"] == pytest.approx(
        krippendorff.alpha(reliability_data=R, level_of_measurement="nominal"), abs=1e-12
    )
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    mean_pct = np.mean([100 * (R[i] == R[j]).mean() for i, j in pairs])
    assert s["percent_agreement"] == pytest.approx(mean_pct, abs=1e-9)


def test_gwet_ac1_by_hand():
    # 2 coders, 10 units: both 1 on 3, both 0 on 5, split on 2. P_a = 0.8; π = (4 + 4)/20 = 0.4
    # (each coder codes 4); P_e = 2 · 0.4 · 0.6 = 0.48; AC1 = (0.8 − 0.48)/(0.52) = 0.615385
    h = np.array([5, 2, 3])
    s = multi_stats(h)
    assert s["gwet_ac1"] == pytest.approx(0.32 / 0.52, abs=1e-12)
    assert s["brennan_prediger"] == pytest.approx(0.6, abs=1e-12)
    # 3 coders, 4 units with k = 0, 1, 3, 3: P_u = 1, 1/3, 1, 1 → P̄ = 5/6; p = 7/12;
    # P_e = 2 · 7/12 · 5/12 = 70/144; AC1 = (5/6 − 70/144)/(1 − 70/144) = 50/74
    assert multi_stats(np.array([1, 1, 0, 2]))["gwet_ac1"] == pytest.approx(50 / 74)


def test_histogram_of_intervals():
    a = np.array([[0, 10]])
    b = np.array([[5, 15]])
    c = np.zeros((0, 2), dtype=np.int64)
    assert histogram([a, b, c], 20).tolist() == [5, 10, 5, 0]
    assert histogram([c, c], 7).tolist() == [7, 0, 0]


def test_histogram_of_touching_selections_of_one_coder():
    # one coder's 0-4 and 4-8 (touching units, as unitizing.merge keeps them) and another's
    # 0-10 over 12 characters: 0-8 by both, 8-10 by one, 10-12 by none
    a = np.array([[0, 4], [4, 8]])
    b = np.array([[0, 10]])
    assert histogram([a, b], 12).tolist() == [2, 2, 8]
    assert histogram([a, a, b], 12).tolist() == [2, 2, 0, 8]


def test_segment_agreement_at_a_share():
    a = np.array([[0, 10], [20, 30]])
    b = np.array([[1, 10], [25, 40]])
    # a's 0-10 is 90 % covered by b's 1-10; a's 20-30 50 %; b's 1-10 fully by a; 25-40 one third
    assert segment_agreement(a, b, 0.9) == (2, 1, 2, 1)
    assert segment_agreement(a, b, 0.5) == (2, 2, 2, 1)
