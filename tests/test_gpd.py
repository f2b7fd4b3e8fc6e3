"""metrics.gpd: the same generalized Pareto fit as scipy's, to the last bit."""

import numpy as np
import pytest
from scipy.stats import genpareto

from themesim.metrics import gpd


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


@pytest.mark.parametrize("i", range(63))
def test_fit_is_scipys_fit(i):
    x = samples()[i]
    assert gpd.fit(x) == genpareto.fit(x, floc=0.0)  # exact: same floats, not close


def test_likelihood_is_scipys_everywhere_fmin_may_step():
    rng = np.random.default_rng(3)
    x = rng.exponential(0.05, 30)
    thetas = [(0.0, 0.05), (-0.5, 0.01), (-2.0, 0.05), (0.3, 0.0), (0.3, -1.0), (np.inf, 0.1)]
    shapes, scales = rng.normal(0, 1, 200), rng.uniform(1e-4, 0.3, 200)
    thetas += list(zip(shapes, scales, strict=True))
    for c, s in thetas:
        ours = gpd.nnlf(np.array([c, s]), x)
        theirs = genpareto._penalized_nnlf([c, 0.0, s], x)
        assert ours == theirs, (c, s)
    # out of the support: the points beyond -scale/c are penalised, as in scipy
    assert gpd.nnlf(np.array([-2.0, 0.05]), x) > 1e4


def test_non_finite_data_is_refused():
    with pytest.raises(ValueError, match="non-finite"):
        gpd.fit([0.1, np.nan, 0.2])
