"""The validation suite's verdicts area on its small grid: every word's error at its null is
at most alpha, the leading route has the power the issue asks for, and the designs' truths
are what they say."""

import numpy as np
import pytest

from themesim.validate import areas, failures, verdict_suite
from themesim.validate import verdicts as area
from themesim.validate.core import rng_for
from themesim.validate.verdict_segments import SegmentDesign, draw_segments


@pytest.fixture(scope="module")
def small():
    return verdict_suite.run("small", seed=0)


def test_small_grid_holds_the_contract(small):
    detail, summary = small
    assert areas()["verdicts"] is verdict_suite
    assert failures(summary).empty
    errors = summary[(summary["property"] == "type1_error") & summary["required"].astype(bool)]
    words = set(errors["quantity"])
    assert words == {"verdict worse", "verdict better", "verdict equivalent",
                     "verdict non-inferior or better"}  # fmt: skip
    assert len(errors) >= 60 and errors["value"].max() <= 0.08
    # designs written after the procedure last changed are in it
    assert detail["design"].str.contains("sd_run=0.6").any()


def test_leading_route_has_power_at_ten_themes_three_runs_three_analysts(small):
    _, summary = small
    power = summary[summary["property"] == "power"].set_index("design")["value"]
    name = "n=10,R=3,K=3,p_h=0.7,d=-0.30,icc=0"
    assert power[f"strength:{name}"] >= 0.8  # the route the report leads with
    assert power[f"strength:{name}"] > power[f"matched:{name}"]
    # the same generator read on the strength scale: 0.3 below in the share matched
    # read on the strength scale the gap is smaller (about 0.24): each part at its own t
    assert power[f"strength@matched:{name}"] >= 0.6


def test_a_margin_from_the_analysts_keeps_the_words_errors(small):
    from themesim.validate.verdict_margin import true_margin

    _, summary = small
    mine = summary[summary["design"].str.contains("margin=analysts")]
    errors = mine[(mine["property"] == "type1_error") & mine["required"].astype(bool)]
    # equivalent at either true margin, non-inferior at -margin, on both routes and designs
    assert len(errors) == 2 * 2 * 3 and errors["value"].max() <= 0.05
    # the bound itself errs large at about its level (shown, not bound)
    bound = mine[mine["quantity"] == "margin bound above the true margin"]["value"]
    assert len(bound) == 4 and bound.max() <= 0.12
    # the true margin: the comparator SD 0.8 on the probit scale read on the share matched
    d = area.Design(themes=10, runs=3, analysts=3, p_h=0.7, sd_analyst=0.8)
    assert 0.15 < true_margin(d, "matched") < 0.22
    assert true_margin(d, "strength") < true_margin(d, "matched")
    assert true_margin(area.Design(sd_analyst=0.0), "matched") == pytest.approx(0.0, abs=1e-12)


def test_truth_is_the_design_difference_and_scales_translate():
    d = area.Design(themes=10, runs=3, analysts=3, p_h=0.7, diff=-0.3)
    gen, hum, clusters, truth = area.draw(d, "matched", rng_for(0, "t"))
    assert truth == -0.3 and len(gen) == 3 and gen[0].shape == (10, 3)
    assert np.isnan(hum[1][:, 1]).all() and np.isfinite(hum[1][:, [0, 2]]).all()
    # on the strength scale the same generator is less far below (E Phi(Y) shrinks to 0.5)
    _, _, _, truth_s = area.draw(d, "strength", rng_for(0, "t"), scale="matched")
    assert -0.3 < truth_s < -0.15
    # declared domains: the same label for a domain in every analyst's themes
    _, _, groups, _ = area.draw(area.Design(groups=True, icc=0.3), "matched", rng_for(1, "t"))
    assert all((g == np.arange(10) % 4).all() for g in groups)


def test_the_segments_route_holds_under_topic_blocks(small):
    detail, summary = small
    seg = summary[summary["design"].str.startswith("segments:")]
    # a strongly serial null (stay 0.9), three runs and analysts with a spread, a power point
    assert seg["design"].str.contains("stay=0.9").any() and len(seg) >= 5
    assert failures(seg).empty
    errors = seg[seg["property"] == "type1_error"]["value"]
    assert len(errors) == 2 and errors.max() <= 0.05
    power = seg[seg["property"] == "power"]["value"]
    assert len(power) == 1 and power.iloc[0] >= 0.5


def test_segment_draws_count_what_their_kappas_read():
    from themesim.metrics.grounding.grounding_stats import kappa_counts
    from themesim.metrics.verdicts.generators import leave_one_out_differences

    d = SegmentDesign(transcripts=4, segments=10, themes=3, runs=2, analysts=3)
    gen, hum, gc, hc, sizes = draw_segments(d, rng_for(0, "t"))
    assert len(gen) == 3 and gen[0].shape == (3, 2) and gc[0].shape == (3, 2, 4, 3)
    tot = gc[1][2, 1].sum(axis=0)  # analyst 1's theme 2 with run 1, over the transcripts
    k = kappa_counts(int(tot[2]), int(tot[0]), int(tot[1]), int(sizes.sum()))
    assert gen[1][2, 1] == pytest.approx(0.0 if np.isnan(k) else k)
    assert np.isnan(hum[0][:, 0]).all() and np.isfinite(hum[0][:, 1:]).all()
    loo = leave_one_out_differences(gc, hc, sizes)
    assert loo.shape == (4,) and np.isfinite(loo).all()
