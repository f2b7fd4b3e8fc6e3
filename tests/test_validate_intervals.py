"""The validation suite's interval area on its small grid: every nominal 95 % interval holds
its level on every design with sets of 6 or more themes, and contains its estimate."""

import numpy as np

from themesim.validate import failures
from themesim.validate import intervals as area


def test_small_grid_holds_the_contract():
    detail, summary = area.run("small", seed=0)
    cov = detail[detail["n_a"].ge(6) & detail["n_b"].ge(6)]
    assert len(cov["design"].unique()) >= 5
    # domain-correlated designs: with groups declared the 95 % intervals are bound; without,
    # the ICC sensitivity at the design's true ICC is, and the 95 % intervals (which assume
    # independent themes) are shown outside the contract
    undeclared = cov["icc"].gt(0) & ~cov["groups"]
    assert undeclared.any() and (cov["groups"] & cov["interval"].eq("ci")).any()
    shown = (cov["interval"] == "ci") == undeclared
    assert cov.loc[undeclared & cov["interval"].eq("icc"), "coverage"].min() >= 0.93
    cov = cov[~shown]
    # 200 draws per design: two Monte Carlo standard errors below the 0.93 floor at most
    assert cov["coverage"].min() >= 0.93 - 2 * np.sqrt(0.93 * 0.07 / 200)
    assert (cov["contains_estimate"] == 1.0).all()
    assert failures(summary).empty
    # the planted one-to-one design at 6 themes: counts get exact, not zero-width, intervals
    planted = detail[detail["design"].str.startswith("planted(n_a=6")]
    f1 = planted[planted["metric"] == "hungarian_f1"].iloc[0]
    assert f1["zero_width_share"] == 0.0 and 0.4 < f1["mean_width"] < 0.9


def test_domain_design_holds_its_share_and_correlates_within_domains():
    from themesim.validate.designs import Design

    rng = np.random.default_rng(0)
    d = Design("domains", 12, 12, 0.5, {"icc": 0.64, "groups": True})
    hits = np.array([(d.draw(rng)[0] >= 0.6).any(axis=1) for _ in range(2000)], dtype=float)
    assert abs(hits.mean() - 0.5) < 0.02  # mu holds the matched share at pi
    # two themes of one domain (0 and 4) match together more often than of two (0 and 1)
    same = np.corrcoef(hits[:, 0], hits[:, 4])[0, 1]
    other = np.corrcoef(hits[:, 0], hits[:, 1])[0, 1]
    assert same > 0.3 and abs(other) < 0.1
    assert d.groups()[0][:5] == ["d0", "d1", "d2", "d3", "d0"]
    assert Design("domains", 12, 12, 0.5, {"icc": 0.16}).groups() == (None, None)
