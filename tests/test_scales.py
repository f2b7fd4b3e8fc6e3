"""The within-set z scale and the raw-versus-z decision table (metrics/scales.py)."""

import numpy as np
import pytest

from themesim.errors import InputError
from themesim.kinds import method_defaults
from themesim.metrics.comparison import Settings, comparison_rows
from themesim.metrics.scales import decision_changes, within_spread, z_scale

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
    Z, _ = z_scale(S, W, W)
    tab = decision_changes(S, Z, [0.5], [2.0], a_ids=list("abcd"), b_ids=list("ABCD"))
    r = tab.iloc[0]
    assert (r["n_raw"], r["n_z"], r["n_both"], r["n_only_raw"], r["n_only_z"]) == (4, 1, 1, 3, 0)
    assert r["share_changed"] == 0.75
    assert r["only_raw_pairs"] == "b:B; c:C; d:D" and r["only_z_pairs"] == ""


def test_decision_changes_with_undefined_z():
    S = np.eye(4) * 0.5
    tab = decision_changes(S, np.full((4, 4), np.nan), [0.5], [2.0], z_flag="a:too_small")
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
    assert r["hungarian_f1_ci_low"] == 1.0
    assert 0 <= r["baseline_share_passes_both"] <= 1


def test_z_default_threshold_and_config_checks(tmp_path):
    assert method_defaults("minilm", {"kind": "sentence_transformer", "scale": "z"})[
        "thresholds"
    ] == [2.0]
    assert method_defaults("minilm", {"scale": "z", "thresholds": [1.5]})["thresholds"] == [1.5]
    from themesim.config import _methods

    (tmp_path / "pre").mkdir()
    cfg = {"methods": {"p": {"kind": "precomputed", "dir": str(tmp_path / "pre"), "scale": "z"}}}
    with pytest.raises(InputError, match="scale z needs within-set"):
        _methods(cfg)
    ok = {"methods": {"t": {"kind": "tfidf", "scale": "z", "thresholds": [3.5]}}}
    assert _methods(ok)["t"]["thresholds"] == [3.5]  # z thresholds are not cosines


def test_report_shows_the_decision_table(tmp_path):
    import pandas as pd
    from helpers import comparison_row, write_method

    from themesim.report.views import _method_view

    spec = write_method(tmp_path, "minilm", [comparison_row("minilm", "human", "llm", 0.5)])
    S = np.eye(4) * 0.5
    Z, _ = z_scale(S, W, W)
    dc = decision_changes(S, Z, [0.5], [2.0], a_ids=list("abcd"), b_ids=list("ABCD"))
    dc.insert(0, "set_b", "llm")
    dc.insert(0, "set_a", "human")
    dc.insert(0, "method", "minilm")
    dc.to_csv(tmp_path / "decision_changes.csv", index=False)
    spec["decisions_csv"] = tmp_path / "decision_changes.csv"
    view = _method_view("minilm", spec, tmp_path, tmp_path)
    (row,) = view["decisions"]["rows"]
    assert row[:7] == ["human", "llm", "0.500", "2.000", "1", "3", "0"]
    assert row[8] == "b:B; c:C; d:D"
    # A method without within-set matrices writes a header-only table: no section.
    pd.DataFrame(columns=dc.columns).to_csv(tmp_path / "empty.csv", index=False)
    spec["decisions_csv"] = tmp_path / "empty.csv"
    assert _method_view("minilm", spec, tmp_path, tmp_path)["decisions"] is None
