"""The within-set z scale and the raw-versus-z decision table (metrics/sets/scales.py)."""

import numpy as np
import pytest

from themesim.errors import InputError
from themesim.kinds import method_defaults
from themesim.metrics.comparison import Settings, comparison_rows
from themesim.metrics.sets.scales import (
    decision_changes,
    within_spread,
    z_cut,
    z_fpr,
    z_pvalues,
    z_scale,
)

# Off-diagonal rows: theme 0 -> (.1, .2, .3): mean .2, sd .1; theme 2 -> (.2, .4, .6): mean .4,
# sd .2.
W = np.array(
    [
        [1.0, 0.1, 0.2, 0.3],
        [0.1, 1.0, 0.4, 0.5],
        [0.2, 0.4, 1.0, 0.6],
        [0.3, 0.5, 0.6, 1.0],
    ]
)


def test_within_spread_hand_computed():
    mu, sd, flags = within_spread(W)
    assert mu[0] == pytest.approx(0.2) and sd[0] == pytest.approx(0.1)
    assert mu[2] == pytest.approx(0.4) and sd[2] == pytest.approx(0.2)
    assert sd[1] == pytest.approx(np.std([0.1, 0.4, 0.5], ddof=1))
    assert flags == ["", "", "", ""]


def test_z_is_the_smaller_of_both_standardisations():
    S = np.full((4, 4), 0.5)
    Z, flag = z_scale(S, W, W)
    assert flag == ""
    assert Z[0, 0] == pytest.approx(3.0)  # (0.5 - 0.2) / 0.1 on both sides
    assert Z[0, 2] == pytest.approx(0.5)  # A side 3.0, B side (0.5 - 0.4) / 0.2
    assert Z[2, 0] == pytest.approx(0.5)
    z1 = (0.5 - np.mean([0.1, 0.4, 0.5])) / np.std([0.1, 0.4, 0.5], ddof=1)
    assert Z[0, 1] == pytest.approx(z1)  # 0.80


def test_small_set_is_nan_and_flagged():
    W3 = np.array([[1.0, 0.2, 0.3], [0.2, 1.0, 0.4], [0.3, 0.4, 1.0]])  # 2 others each
    Z, flag = z_scale(np.full((3, 4), 0.5), W3, W)
    assert np.isnan(Z).all()
    assert flag == "a:too_small"
    W0 = W.copy()
    W0[1, [0, 2, 3]] = W0[[0, 2, 3], 1] = 0.3  # theme 1 of B: zero spread
    Z, flag = z_scale(np.full((4, 4), 0.5), W, W0)
    assert np.isnan(Z[:, 1]).all() and np.isfinite(Z[:, 0]).all()
    assert "b:zero_spread" in flag


def test_decision_changes_hand_computed():
    # Diagonal 0.5: raw keeps all four at 0.5; the z of the diagonal is 3.0, 0.80, 0.5, 0.22,
    # so at z >= 2 only A0-B0 survives.
    S = np.eye(4) * 0.5
    tab = decision_changes(S, z_scale(S, W, W), [0.5], [2.0], "ge", list("abcd"), list("ABCD"))
    r = tab.iloc[0]
    assert (r["n_raw"], r["n_z"], r["n_both"], r["n_only_raw"], r["n_only_z"]) == (4, 1, 1, 3, 0)
    assert r["share_changed"] == 0.75
    assert r["only_raw_pairs"] == "b:B; c:C; d:D" and r["only_z_pairs"] == ""


def test_decision_changes_with_undefined_z():
    S = np.eye(4) * 0.5
    tab = decision_changes(S, (np.full((4, 4), np.nan), "a:too_small"), [0.5], [2.0])
    assert tab.loc[0, "n_raw"] == 4 and np.isnan(tab.loc[0, "n_z"])
    assert tab.loc[0, "z_flag"] == "a:too_small"


def test_every_family_runs_on_z():
    rng = np.random.default_rng(0)
    S = rng.uniform(0.1, 0.4, (6, 6))
    S[np.arange(6), np.arange(6)] = 0.8
    Wa = rng.uniform(0.1, 0.4, (6, 6))
    Wa = (Wa + Wa.T) / 2
    Z, _ = z_scale(S, Wa, Wa)
    Wz = z_scale(Wa, Wa, Wa)[0]
    rows, _ = comparison_rows(
        Z, Settings(thresholds=[2.0], scale="z", bootstrap={"n": 50, "seed": 0}), W_a=Wz, W_b=Wz
    )
    r = rows.iloc[0]
    assert r["hungarian_n_matched"] == 6  # every planted pair is > 2 sd above both spreads
    # 6 of 6 pairs, never a certain [1, 1]; B's themes 2 and 4 both match exactly A's 2 and
    # 4 (z > 2 by chance), a 2 x 2 block and so one unit: Clopper-Pearson's lower end for 5
    # of 5 units, 0.025 ** (1 / 5)
    assert r["hungarian_f1_ci_low"] == pytest.approx(0.025 ** (1 / 5))
    assert 0 <= r["baseline_share_passes_both"] <= 1


def test_z_default_threshold_and_config_checks(tmp_path):
    assert method_defaults("minilm", {"kind": "sentence_transformer", "scale": "z"})[
        "thresholds"
    ] == [2.0]
    assert method_defaults("minilm", {"scale": "z", "thresholds": [1.5]})["thresholds"] == [1.5]
    from themesim.study.methods import active_methods

    (tmp_path / "pre").mkdir()
    cfg = {"methods": {"p": {"kind": "precomputed", "dir": str(tmp_path / "pre"), "scale": "z"}}}
    with pytest.raises(InputError, match="scale z needs within-set"):
        active_methods(cfg)
    ok = {"methods": {"t": {"kind": "tfidf", "scale": "z", "thresholds": [3.5]}}}
    assert active_methods(ok)[1]["t"] == [3.5]  # z thresholds are not cosines


def test_report_shows_the_decision_table(tmp_path):
    import pandas as pd
    from helpers import comparison_row, write_method

    from themesim.report.views import method_view

    spec = write_method(tmp_path, "minilm", [comparison_row("minilm", "human", "llm", 0.5)])
    S = np.eye(4) * 0.5
    dc = decision_changes(S, z_scale(S, W, W), [0.5], [2.0], a_ids=list("abcd"), b_ids=list("ABCD"))
    dc.insert(0, "set_b", "llm")
    dc.insert(0, "set_a", "human")
    dc.insert(0, "method", "minilm")
    dc.to_csv(tmp_path / "decision_changes.csv", index=False)
    spec["decisions_csv"] = tmp_path / "decision_changes.csv"
    view = method_view("minilm", spec, tmp_path, tmp_path)
    (row,) = view["decisions"]["rows"]
    assert row[:7] == ["human", "llm", "0.500", "2.000", "1", "3", "0"]
    assert row[8] == "b:B; c:C; d:D"
    # A method without within-set matrices writes a header-only table: no section.
    pd.DataFrame(columns=dc.columns).to_csv(tmp_path / "empty.csv", index=False)
    spec["decisions_csv"] = tmp_path / "empty.csv"
    assert method_view("minilm", spec, tmp_path, tmp_path)["decisions"] is None


# --- the size-aware cut (issue 23, item 7) ---------------------------------------------------


def test_z_fpr_hand_computed_and_the_issues_rates():
    # t with 2 df: sf(x) = (1 - x / sqrt(x² + 2)) / 2. Four themes, m = 3 others: z > 2 is
    # t_2 > 2 / sqrt(4/3) = sqrt(3), so the rate is (1 - sqrt(3/5)) / 2 = 0.1127.
    assert z_fpr(2.0, 3) == pytest.approx((1 - np.sqrt(3 / 5)) / 2, rel=1e-12)
    # the issue's rates for 4, 10 and 20 themes: 0.11, 0.047, 0.033
    np.testing.assert_allclose(z_fpr(2.0, [3, 9, 19]), [0.1127, 0.0472, 0.0335], atol=5e-5)
    assert np.isnan(z_fpr(2.0, 2))  # fewer than 3 others: no spread, no rate


def test_z_cut_hand_computed():
    # t_2's upper 0.05 point: (2p - 1) / sqrt(2p(1 - p)) at p = 0.95; times sqrt(1 + 1/3).
    t2 = 0.9 / np.sqrt(2 * 0.95 * 0.05)
    assert z_cut(3, 0.05) == pytest.approx(t2 * np.sqrt(4 / 3), rel=1e-12)
    cuts = z_cut([3, 5, 9, 19, 29], 0.05)
    assert (np.diff(cuts) < 0).all() and cuts[-1] > 1.645  # falls towards the normal's
    assert z_fpr(cuts, [3, 5, 9, 19, 29]) == pytest.approx(0.05)
    assert np.isnan(z_cut(1))
    with pytest.raises(ValueError):
        z_cut(5, 1.5)


def test_z_fpr_matches_simulated_normal_cells():
    # A cell exchangeable with the m others of its row (all normal): its z passes 2 at the
    # t rate, not the normal's 0.023.
    rng = np.random.default_rng(0)
    m = 5
    x = rng.normal(size=(40000, m + 1))
    z = (x[:, 0] - x[:, 1:].mean(axis=1)) / x[:, 1:].std(axis=1, ddof=1)
    rate = np.mean(z > 2.0)
    assert abs(rate - z_fpr(2.0, m)) < 3 * np.sqrt(rate * (1 - rate) / len(z))


def test_z_pvalues_is_the_larger_side():
    S = np.full((4, 4), 0.5)
    P = z_pvalues(S, W, W)
    # cell (0, 2): A side z = 3 against theme 0's row, B side z = 0.5 against theme 2's
    assert P[0, 2] == pytest.approx(z_fpr(0.5, 3))
    assert P[0, 0] == pytest.approx(z_fpr(3.0, 3))
    small = np.array([[1.0, 0.2, 0.3], [0.2, 1.0, 0.4], [0.3, 0.4, 1.0]])
    assert np.isnan(z_pvalues(np.full((3, 4), 0.5), small, W)).all()  # 2 others: no p


def test_decision_changes_carry_the_size_aware_columns():
    S = np.eye(4) * 0.5 + 0.1
    tab = decision_changes(S, z_scale(S, W, W), [0.5], [2.0, 3.0], z_alpha=0.1)
    assert list(tab.columns[-4:]) == ["z_fpr_a", "z_fpr_b", "z_cut_a", "z_cut_b"]
    np.testing.assert_allclose(tab["z_fpr_a"], z_fpr([2.0, 3.0], 3))
    np.testing.assert_allclose(tab["z_cut_b"], z_cut(3, 0.1))


def test_comparison_rows_report_the_size_aware_cut():
    rng = np.random.default_rng(1)
    S, W_a, W_b = rng.uniform(0, 1, (4, 6)), rng.uniform(0, 1, (4, 4)), rng.uniform(0, 1, (6, 6))
    W_b = (W_b + W_b.T) / 2
    W_a = (W_a + W_a.T) / 2
    rows, _ = comparison_rows(S, Settings(thresholds=[0.5]), W_a=W_a, W_b=W_b)
    r = rows.iloc[0]
    assert r["baseline_z_fpr_a"] == pytest.approx(z_fpr(2.0, 3))  # metrics.baseline_z
    assert r["baseline_z_fpr_b"] == pytest.approx(z_fpr(2.0, 5))
    assert r["z_cut_a"] == pytest.approx(z_cut(3, 0.05)) and "z_fpr_a" not in rows
    Z, _ = z_scale(S, W_a, W_b)
    rows, _ = comparison_rows(Z, Settings(thresholds=[1.0, 2.0], scale="z"), W_a=W_a, W_b=W_b)
    np.testing.assert_allclose(rows["z_fpr_b"], z_fpr([1.0, 2.0], 5))


def test_gamma_per_scale():
    from themesim.metrics.settings import DEFAULT_METRICS, gamma_for

    assert gamma_for(0.2, "z") == 0.2  # a number: every scale, as before
    assert gamma_for({"z": 1.0}, "z") == 1.0
    assert gamma_for({"z": 1.0}, "cosine") == 0.15  # the rest keep their defaults
    assert gamma_for(DEFAULT_METRICS["gamma"], "z") == 1.5
    assert gamma_for(DEFAULT_METRICS["gamma"], "angular") == 0.05
    assert Settings(thresholds=[0.5]).gamma == 0.15


@pytest.mark.parametrize(
    "gamma, ok", [(0.1, True), ({"z": 1.0}, True), ({"zz": 1.0}, False), (-0.1, False)]
)
def test_gamma_in_the_schema(gamma, ok):
    from pathlib import Path

    import jsonschema
    import yaml

    path = Path(__file__).resolve().parents[1] / "workflow/schemas/config.schema.yaml"
    metrics = yaml.safe_load(path.read_text())["properties"]["metrics"]
    errors = list(jsonschema.Draft202012Validator(metrics).iter_errors({"gamma": gamma}))
    assert (not errors) == ok
