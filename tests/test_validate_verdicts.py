"""The verdicts area of the validation suite: its two generative models know their truths,
and on the quick grid the words' errors, the size question and the power are measured
(docs/validity.md has the full grid's figures)."""

from dataclasses import replace

import numpy as np
import pytest

from themesim.metrics.verdicts.difference import difference
from themesim.validate import areas, verdict_suite
from themesim.validate import verdicts as probit
from themesim.validate.core import rng_for
from themesim.validate.verdict_ideas import Fixed, IdeaDesign, point, study
from themesim.validate.verdict_segments import SegmentDesign, draw_segments


def _mean_difference(draw, n):
    values = [difference(s).difference for s in (draw() for _ in range(n)) if s is not None]
    return float(np.mean(values)), float(np.std(values) / np.sqrt(len(values)))


@pytest.mark.parametrize("gen_themes", [6, 16])
def test_the_probit_models_truth_is_its_difference_whatever_the_sizes(gen_themes):
    d = probit.Design(themes=10, runs=3, analysts=3, p_h=0.5, diff=-0.2, gen_themes=gen_themes)
    rng = rng_for(0, "test", gen_themes)
    mean, se = _mean_difference(lambda: probit.draw(d, "matched", rng), 200)
    assert abs(mean - d.diff) < 3 * se + 0.01


def test_the_probit_model_draws_slots_and_declared_domains():
    d = probit.Design(themes=10, runs=2, analysts=3, gen_themes=16, p_h=0.5, groups=True)
    s = probit.draw(d, "matched", rng_for(1, "t"))
    assert s.sizes() == {"analyst1": 10, "analyst2": 10, "analyst3": 10, "run1": 16, "run2": 16}
    assert set(s.tables) == {("analyst1", "run1"), ("analyst1", "run2"), ("analyst2", "run1"),
                             ("analyst2", "run2"), ("analyst3", "run1"), ("analyst3", "run2"),
                             ("analyst1", "analyst2"), ("analyst1", "analyst3"),
                             ("analyst2", "analyst3")}  # fmt: skip
    # a theme matches at most its slot's one partner: evidence 0 elsewhere
    ev, _ = s.tables[("analyst1", "run1")]
    assert (ev.sum(axis=1) <= 1).all() and set(np.unique(ev)) <= {0.0, 1.0}
    assert all(g in range(4) for g in s.groups["analyst2"])
    assert s.groups["run1"] == [None] * 16


def test_the_ideas_model_is_symmetric_and_solves_its_shift():
    """Runs written like the analysts (shift 0, as many themes) agree with them as they do
    with each other: the truth is 0 up to its Monte Carlo error; a worse generator is
    found at the shift whose truth is the asked difference."""
    d = IdeaDesign(themes=8, runs=3, analysts=3, ideas=20)
    fixed = Fixed(d, 0, "matched", truth_draws=150)
    assert abs(fixed.truth(0.0)) < 0.03
    shift = fixed.solve(-0.2)
    assert shift is not None and shift < 0
    assert fixed.truth(shift) == pytest.approx(-0.2, abs=2e-3)
    # the data and the held writers are the design's own: the same for every difference
    again = Fixed(replace(d, diff=-0.2), 0, "matched", truth_draws=150)
    assert np.array_equal(again.data.vectors, fixed.data.vectors)
    s = study(d, fixed.data, fixed.held, 0.0, "strength", rng_for(2, "t"))
    assert s.sizes()["run1"] == 8 and 0 < point(s) + 1 < 2


def test_segment_draws_give_every_theme_pairs_kappa():
    d = SegmentDesign(transcripts=4, segments=10, themes=3, runs=2, analysts=3)
    s = draw_segments(d, rng_for(0, "t"))
    ev, order = s.tables[("analyst1", "run2")]
    assert ev.shape == (3, 3) and np.array_equal(order, np.eye(3))
    assert np.isfinite(ev).all() and (ev <= 1).all()


@pytest.fixture(scope="module")
def small():
    return verdict_suite.run("small", seed=0)


def test_the_quick_grid_measures_every_word_on_both_models(small):
    detail, summary = small
    assert areas()["verdicts"] is verdict_suite
    assert set(detail["model"]) == {"probit", "ideas", "segments"}
    errors = summary[summary["property"] == "type1_error"]
    words = {"verdict worse", "verdict better", "verdict equivalent",
             "verdict non-inferior or better"}  # fmt: skip
    assert words <= set(errors["quantity"]) <= words | {
        "verdict worse at equal quality", "verdict better at equal quality"}  # fmt: skip
    # one principled interval: no word errs at twice its level on the quick grid
    assert errors["value"].max() <= 0.10
    # near its level, neither far below (errors) nor far above (lost power); the quick
    # grid's small ceiling design (8 themes, one run, two analysts at 0.8) covers least
    cov = summary[summary["property"] == "coverage_tost_level"]["value"]
    assert 0.86 <= cov.median() <= 0.96 and cov.min() >= 0.7 and cov.max() <= 0.99


def test_a_generator_writing_fewer_or_more_themes_is_not_called_better_or_worse(small):
    detail, _ = small
    equal = detail[(detail["model"] == "probit") & detail["gen_themes"].isin([6, 16])
                   & np.isclose(detail["diff"], 0.0)]  # fmt: skip
    assert len(equal) == 4  # two sizes, two routes
    assert (equal["p_better"] <= 0.1).all() and (equal["p_worse"] <= 0.1).all()


def test_power_at_ten_themes_three_runs_three_analysts(small):
    _, summary = small
    power = summary[summary["property"] == "power"].set_index("design")["value"]
    name = "n=10,R=3,K=3,p_h=0.7,d=-0.30,icc=0"
    assert power[f"strength:{name}"] >= 0.7
