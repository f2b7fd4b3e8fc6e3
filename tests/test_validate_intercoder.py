"""Validation area `intercoder`: the transcript jackknife intervals of the coder agreement
cover the true κ and α (validate/intercoder.py), on its small grid."""

import pytest

from themesim.validate.intercoder import PREVALENCE, run, true_values


def test_true_values_by_hand():
    # E[sens] = 0.6, E[fpr] = 0.04; pooled over codes, p̄ = 0.1:
    # both 0.06, only human 0.04, only coder 0.036, neither 0.864 (per segment and code)
    assert PREVALENCE.mean() == pytest.approx(0.1)
    p_o, p_h, p_c = 0.06 + 0.864, 0.1, 0.096
    p_e = p_h * p_c + (1 - p_h) * (1 - p_c)
    assert true_values()["pooled_kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))


def test_small_grid_intervals_cover():
    detail, summary = run("small", 0)
    cov = summary[summary["property"] == "coverage"]
    assert len(cov) == 6 and cov["passes"].all(), cov
    # the interval narrows as transcripts grow
    width = summary[summary["property"] == "mean_width"].set_index(["design", "quantity"])
    assert (
        width.loc[("12 transcripts", "pooled_kappa"), "value"]
        < width.loc[("6 transcripts", "pooled_kappa"), "value"]
    )
    assert detail["estimate"].notna().all()
