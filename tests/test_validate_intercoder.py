"""Validation area `intercoder`: the transcript jackknife intervals of the coder agreement
cover the true κ and α, and agreement across codebooks holds its level on nulls
(validate/intercoder.py), on its small grid."""

import numpy as np
import pytest

from themesim.validate.intercoder import CB_K, PREVALENCE, codebook_similarity, run, true_values


@pytest.fixture(scope="module")
def small():
    return run("small", 0)


def test_true_values_by_hand():
    # E[sens] = 0.6, E[fpr] = 0.04; pooled over codes, p̄ = 0.1:
    # both 0.06, only human 0.04, only coder 0.036, neither 0.864 (per segment and code)
    assert PREVALENCE.mean() == pytest.approx(0.1)
    p_o, p_h, p_c = 0.06 + 0.864, 0.1, 0.096
    p_e = p_h * p_c + (1 - p_h) * (1 - p_c)
    assert true_values()["pooled_kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))


def test_small_grid_intervals_cover(small):
    detail, summary = small
    cov = summary[summary["property"] == "coverage"]
    assert len(cov) == 6 and cov["passes"].all(), cov
    # the interval narrows as transcripts grow
    width = summary[summary["property"] == "mean_width"].set_index(["design", "quantity"])
    assert (
        width.loc[("12 transcripts", "pooled_kappa"), "value"]
        < width.loc[("6 transcripts", "pooled_kappa"), "value"]
    )
    assert detail["estimate"].notna().all()


def test_codebook_similarities_are_similarities():
    rng = np.random.default_rng(0)
    ka = CB_K[0]
    for kind in ("uniform", "cosine", "related", "across only"):
        s = codebook_similarity(rng, kind)
        assert (s == s.T).all() and (np.diag(s) == 1).all() and ((s >= 0) & (s <= 1)).all()
    s = codebook_similarity(rng, "across only")
    assert (s[:ka, :ka] == np.eye(ka)).all() and s[:ka, ka:].mean() > 0.3


def test_agreement_across_codebooks_holds_its_level(small):
    _, summary = small
    cb = summary[summary["quantity"] == "cu_alpha_codebooks"].set_index(["design", "property"])
    t1 = cb.xs("type1_error", level="property")
    bound = t1[t1["required"].astype(bool)]
    assert len(bound) == 6 and bound["passes"].all() and (bound["value"] <= 0.05).all(), bound
    # its level under independence sits at or below 0 (the test is conservative) ...
    est = cb.xs("mean_estimate", level="property")
    assert (est.loc[bound.index, "value"] < 0).all()
    # ... unless the similarity file leaves the pairs within each codebook out: then it is far
    # above 0 and the test rejects almost always
    stress = t1[~t1["required"].astype(bool)]
    assert len(stress) == 2 and (stress["value"] > 0.9).all()
    assert cb.xs("power", level="property")["value"].min() > 0.7
