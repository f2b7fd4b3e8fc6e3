"""Transport in the validation suite: its intervals cover, and the scaled mass reads 0 for
unrelated sets and rises with the share of matched themes."""

import numpy as np

from themesim.validate import failures
from themesim.validate import transport as area


def test_small_grid():
    detail, summary = area.run("small", seed=0)
    assert failures(summary).empty
    assert detail["coverage"].min() >= 0.93 - 2 * np.sqrt(0.93 * 0.07 / 100)
    scaled = detail.groupby("design", sort=False)["ot_mass_scaled_mean"].first()
    unrelated = scaled["planted(n_a=6,n_b=6,pi=0.0)"]
    half = scaled["planted(n_a=8,n_b=8,pi=0.5)"]
    full = scaled["planted(n_a=10,n_b=10,pi=1.0)"]
    assert abs(unrelated) < 0.05 and unrelated < half < full
