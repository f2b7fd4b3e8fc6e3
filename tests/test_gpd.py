"""metrics.sets.gpd: the null model's generalized Pareto fits and their check, against
scipy.stats.genpareto."""

import numpy as np
import pytest
from scipy.stats import genpareto

from themesim.metrics.sets import gpd


def samples():
    rng = np.random.default_rng(7)
    out = [np.array([0.01, 0.02]), np.array([0.0, 0.0, 0.05]), np.tile([0.1, 0.2], 6)]
    for k in range(60):
        size = int(rng.integers(3, 50))
        if k % 3 == 0:
            out.append(rng.exponential(rng.uniform(0.001, 0.2), size))
        elif k % 3 == 1:  # bounded: the free fit has a negative shape
            out.append(rng.uniform(0, rng.uniform(0.01, 0.3), size))
        else:  # ties, as rounded similarities give
            out.append(np.round(rng.uniform(0, 0.1, size), 2))
    return out


def test_non_finite_data_is_refused():
    with pytest.raises(ValueError, match="non-finite"):
        gpd.fit_mle([0.1, np.nan, 0.2])


def test_anderson_darling_hand_computed():
    # Exponential (shape 0, scale 0.2) at x = 0.1, 0.2, 0.3: z_j = 1 - exp(-x_j / 0.2) and
    # ln(1 - z_j) = -x_j / 0.2, so A² = -3 - (1/3) Σ (2j - 1) [ln z_j + ln(1 - z_(4-j))].
    lz = np.log1p(-np.exp(-np.array([0.5, 1.0, 1.5])))
    a2 = -3 - (1 * (lz[0] - 1.5) + 3 * (lz[1] - 1.0) + 5 * (lz[2] - 0.5)) / 3
    assert gpd.anderson_darling([0.3, 0.1, 0.2], 0.0, 0.2) == pytest.approx(a2, rel=1e-12)
    # a point at or beyond a bounded fit's end point: the fit is not trusted
    assert gpd.anderson_darling([0.1, 0.5], -1.0, 0.5) == np.inf


def test_ad_critical_table_points_interpolation_and_clamping():
    assert gpd.ad_critical(0.0) == pytest.approx(0.974)  # Choulakian & Stephens, k = 0
    assert gpd.ad_critical(-0.5) == pytest.approx(1.321)
    assert gpd.ad_critical(0.05) == pytest.approx((0.935 + 0.974) / 2)  # halfway 0.1 and 0
    assert gpd.ad_critical(-2.0) == pytest.approx(1.321)  # beyond the table: its last row
    assert gpd.ad_critical(0.9, 0.01) == pytest.approx(1.086)
    with pytest.raises(ValueError, match="level"):
        gpd.ad_critical(0.0, 0.2)


def test_ad_table_orientation_by_simulation():
    # The table's rows are in scipy's shape: the 95th percentile of A² over ML fits of
    # GPD(0.5) samples is near 0.830, not the 1.221 of the opposite sign.
    rng = np.random.default_rng(0)
    a2 = []
    for _ in range(300):
        x = genpareto.rvs(0.5, size=40, random_state=rng)
        c, _, s = genpareto.fit(x, floc=0.0)
        a2.append(gpd.anderson_darling(x, c, s))
    assert abs(np.quantile(a2, 0.95) - 0.830) < 0.15


def test_fit_scale_is_the_fixed_shape_maximum_likelihood():
    x = np.random.default_rng(2).exponential(0.05, 40)
    assert gpd.fit_scale(x, 0.0) == x.mean()
    ours = gpd.fit_scale(x, 0.2)
    _, _, theirs = genpareto.fit(x, f0=0.2, floc=0.0)  # Nelder-Mead: close, not exact
    assert ours == pytest.approx(theirs, rel=1e-3)
    nll = [-genpareto.logpdf(x, 0.2, scale=s).sum() for s in (ours, theirs)]
    assert nll[0] <= nll[1]
    with pytest.raises(ValueError):
        gpd.fit_scale(x, -0.1)


@pytest.mark.parametrize("i", range(63))
def test_fit_mle_reaches_scipys_likelihood(i):
    # fit_mle searches shape >= -1 (below it the likelihood is unbounded); where scipy's
    # fit lies there too, fit_mle's likelihood is at least as high.
    x = samples()[i]
    if not np.ptp(x) > 0:
        with pytest.raises(ValueError):
            gpd.fit_mle(x)
        return
    c, _, s = genpareto.fit(x, floc=0.0)
    c2, s2 = gpd.fit_mle(x)
    assert c2 >= -1.0
    if c >= -1.0 and np.unique(x).size >= 5:  # not a degenerate handful of tied values
        ll = [genpareto.logpdf(x, cc, scale=ss).sum() for cc, ss in ((c, s), (c2, s2))]
        assert ll[1] >= ll[0] - 1e-7


def test_fit_mle_exponential_limit_hand_computed():
    # At t = 0 the profile likelihood is the exponential's: -n (log mean + 1).
    x = np.array([0.1, 0.2, 0.3, 0.6])
    shape, ll = gpd._profile(np.array([0.0]), x)
    assert shape[0] == 0.0 and ll[0] == pytest.approx(-4 * (np.log(0.3) + 1))
    # and the profile at t agrees with the GPD log-likelihood at (shape(t), shape(t) / t)
    t = np.array([2.0])
    sh, ll = gpd._profile(t, x)
    assert ll[0] == pytest.approx(genpareto.logpdf(x, sh[0], scale=sh[0] / 2.0).sum())
