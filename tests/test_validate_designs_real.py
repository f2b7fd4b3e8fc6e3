"""The real-embedding design delivers the sizes it names, or refuses (validate/designs.py)."""

import numpy as np
import pytest

from themesim.validate.designs import Design, grid


@pytest.mark.parametrize("name", ["small", "full"])
def test_every_real_design_of_the_grids_draws_the_sizes_it_names(name):
    rng = np.random.default_rng(0)
    designs = [d for d in grid(name) if d.kind == "real" and d.params["method"] == "minilm"]
    assert designs
    for d in designs:
        for _ in range(40):
            S, W_a, W_b = d.draw(rng)
            assert S.shape == (d.n_a, d.n_b) and W_a.shape == (d.n_a,) * 2
            assert W_b.shape == (d.n_b,) * 2


def test_a_b_the_demo_cannot_fill_is_refused():
    # All ten human themes in A leave two themes that match none of them: B of 12 is short.
    d = Design("real", 10, 12, 0.3, {"method": "minilm"}, theta=0.56)
    with pytest.raises(ValueError, match="holds only"):
        for seed in range(5):
            d.draw(np.random.default_rng(seed))
