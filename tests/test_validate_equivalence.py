"""The validation suite's equivalence area on its small grid: at the margin neither verdict
is reached more often than alpha, the difference's interval holds its level, and theme sets
drawn through similarity matrices and the Hungarian assignment give the exact rates."""

import numpy as np
import pytest

from themesim.validate import areas, failures
from themesim.validate import equivalence as area


@pytest.fixture(scope="module")
def small():
    return area.run("small", seed=0)


def test_small_grid_holds_the_contract(small):
    detail, summary = small
    assert "equivalence" in areas()
    assert failures(summary).empty
    errors = summary[summary["property"] == "type1_error"]
    sizes = set(errors["n_a"])
    assert {6, 11, 19, 30} <= sizes  # reference sizes 6-30
    assert len(errors) >= 40
    # exact rows: the largest probability of each verdict at the margin
    exact = errors[errors["mc_se"] == 0]
    for quantity in ("verdict equivalent", "verdict worse"):
        assert exact.loc[exact["quantity"] == quantity, "value"].max() <= area.ALPHA
    cov = summary[summary["property"] == "coverage"]["value"]
    tost = summary[summary["property"] == "coverage_tost_level"]["value"]
    assert cov.min() >= 0.95 - 0.02 and tost.min() >= 0.90 - 0.02
    # equivalence within 0.10 is out of reach below 31 themes; 40 themes can show it
    power = summary[
        (summary["property"] == "power") & (summary["quantity"] == "verdict equivalent")
    ]
    assert power.loc[power["n_a"] < 31, "value"].max() == 0.0
    assert power.loc[power["n_a"] == 40, "value"].max() > 0.01


def test_simulated_theme_sets_agree_with_the_exact_rates(small):
    detail, _ = small
    sim = detail[detail["kind"] == "simulated"]
    assert len(sim) == 3
    for r in sim.itertuples():
        for got, want in ((r.p_equivalent, r.exact_p_equivalent), (r.p_worse, r.exact_p_worse)):
            se = np.sqrt(max(want * (1 - want), 1e-4) / r.draws)
            assert abs(got - want) <= 4 * se, r.design


def test_cells_hold_the_design():
    p = area.cells(0.7, -0.1, 0.3)
    assert np.isclose(p.sum(), 1.0)
    assert np.isclose(p[0] + p[1], 0.6)  # B's rate
    assert np.isclose(p[0] + p[2], 0.7)  # the analyst's rate
    assert area.cells(0.95, 0.1, 0.0) is None  # B would match more than every theme
    # the exact engine on a case by hand: 2 themes, each "only B" with probability 1/2
    e = area.exact(2, np.array([0.0, 0.5, 0.0, 0.5]), 0.5)
    assert e["tables"] == 10 and np.isclose(e["p_equivalent"] + e["p_worse"], 0.0)
