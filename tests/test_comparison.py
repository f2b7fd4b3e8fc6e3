"""All families of one comparison composed (comparison.py) and `themesim score --families`."""

import json
import subprocess
import sys

import numpy as np
import pytest
from seed_examples import EX4

from themesim.metrics.comparison import Settings, comparison_rows, theme_rows
from themesim.metrics.method_scale import on_scale


def random_case(seed=0, n_a=6, n_b=7):
    rng = np.random.default_rng(seed)
    S = rng.uniform(0, 0.5, (n_a, n_b))
    S[np.arange(n_a), np.arange(n_a)] = rng.uniform(0.8, 0.95, n_a)  # planted one-to-one
    W_a = rng.uniform(0, 0.6, (n_a, n_a))
    W_b = rng.uniform(0, 0.6, (n_b, n_b))
    return S, (W_a + W_a.T) / 2, (W_b + W_b.T) / 2


def test_set_level_metrics_invariant_to_theme_order():
    S, W_a, W_b = random_case()
    st = Settings(thresholds=[0.5, 0.7], bootstrap={"n": 0, "seed": 0})
    base, _ = comparison_rows(S, st, W_a=W_a, W_b=W_b)
    pa, pb = np.random.default_rng(5).permutation(6), np.random.default_rng(6).permutation(7)
    perm, _ = comparison_rows(S[pa][:, pb], st, W_a=W_a[np.ix_(pa, pa)], W_b=W_b[np.ix_(pb, pb)])
    assert list(base.columns) == list(perm.columns)
    assert base["contract"].tolist() == perm["contract"].tolist()  # the one text column
    base, perm = base.drop(columns="contract"), perm.drop(columns="contract")
    np.testing.assert_allclose(
        base.to_numpy(float), perm.to_numpy(float), rtol=1e-6, atol=1e-9, equal_nan=True
    )


def test_rows_carry_every_family():
    S, W_a, W_b = random_case()
    null_pool = np.random.default_rng(1).uniform(0, 0.6, (6, 200))
    st = Settings(thresholds=[0.6], bootstrap={"n": 30, "seed": 3})
    rows, extra = comparison_rows(S, st, W_a=W_a, W_b=W_b, null_pool=null_pool)
    r = rows.iloc[0]
    assert r["hungarian_n_matched"] == 6 and r["unique_match_rate_a"] > 0
    # Every planted match beats all 200 pool texts by far: the tail gives p < 0.05 / 6.
    assert r["significant_match_rate"] == 1.0
    assert r["hungarian_f1_ci_low"] <= r["hungarian_f1_ci_high"]
    assert extra["plan"].shape == (6, 7) and r["ot_total_mass"] > 0
    assert 0 <= r["baseline_share_passes_both"] <= 1


def test_theme_rows_example4():
    a = {"theme_id": ["a1", "a2", "a3"], "name": ["A1", "A2", "A3"]}
    b = {"theme_id": ["b1", "b2", "b3"], "name": ["B1", "B2", "B3"]}
    import pandas as pd

    t = theme_rows(EX4, Settings(thresholds=[0.7]), pd.DataFrame(a), pd.DataFrame(b))
    by_id = t.set_index("theme_id")
    # Seed 000: A1's best 0.80 vs second 0.75 is ambiguous at gamma 0.15; A3 is unique.
    assert by_id.loc["a1", "category"] == "ambiguous"
    assert by_id.loc["a3", "category"] == "confident_unique"
    assert by_id.loc["a3", "gap_abs"] == pytest.approx(0.85 - 0.30)


def test_angular_and_clamped_scales():
    S = np.array([[0.9, -0.2]])
    ang = on_scale(S, Settings(thresholds=[0.5], scale="angular"))
    np.testing.assert_allclose(ang, 1 - np.arccos(S) / np.pi)
    assert on_scale(S, Settings(thresholds=[0.5], clamp=True)).tolist() == [[0.9, 0.0]]


def _csv(path, M, prefix_rows="A", prefix_cols="B"):
    lines = [",".join([""] + [f"{prefix_cols}{j}" for j in range(M.shape[1])])]
    lines += [
        ",".join([f"{prefix_rows}{i}"] + [repr(float(v)) for v in row]) for i, row in enumerate(M)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_score_families_and_baselines(tmp_path):
    S, W_a, W_b = random_case()
    m = _csv(tmp_path / "m.csv", S)
    wa = _csv(tmp_path / "wa.csv", W_a, "A", "A")
    wb = _csv(tmp_path / "wb.csv", W_b, "B", "B")
    cmd = [sys.executable, "-m", "themesim.cli", "score", str(m), "--threshold", "0.6"]
    out = subprocess.run(
        cmd + ["--within-a", str(wa), "--within-b", str(wb), "--bootstrap", "40"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (row,) = json.loads(out)
    assert row["hungarian_n_matched"] == 6
    for key in (
        "gap_abs_median_a",
        "ot_n_splits",
        "baseline_z_median_a",
        "baseline_share_passes_both",
        "raza_jaccard_ci_low",
    ):
        assert key in row, key
    plain = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    assert "gap_abs_median_a" not in plain[0]


def test_baseline_share_intervals_are_clopper_pearson_over_the_defined_themes():
    from statsmodels.stats.proportion import proportion_confint

    from themesim.metrics.sets.baselines import within_baselines

    S, W_a, W_b = random_case(seed=4)
    W_a[0, 1:] = W_a[1:, 0] = 0.2  # a theme with zero spread gets a flag and NaN z
    st = Settings(thresholds=[0.6], bootstrap={"n": 50, "seed": 0})
    r = comparison_rows(S, st, W_a=W_a, W_b=W_b)[0].iloc[0]
    z = within_baselines(S, W_a)["baseline_z"]
    n, x = int(z.notna().sum()), int((z > 2).sum())
    assert n == len(z) - 1
    lo, hi = proportion_confint(x, n, alpha=0.05, method="beta")
    assert r["baseline_share_z_gt_2_a_ci_low"] == pytest.approx(lo)
    assert r["baseline_share_z_gt_2_a_ci_high"] == pytest.approx(hi)


def test_theme_level_intervals_contain_the_estimate():
    S, W_a, W_b = random_case(seed=7, n_a=12, n_b=12)
    null_pool = np.random.default_rng(2).uniform(0, 0.9, (12, 200))
    st = Settings(thresholds=[0.6], bootstrap={"n": 400, "seed": 11})
    rows, _ = comparison_rows(S, st, W_a=W_a, W_b=W_b, null_pool=null_pool)
    r = rows.iloc[0]
    for m in (
        "significant_match_rate",
        "baseline_z_median_a",
        "baseline_adjusted_median_b",
        "baseline_share_passes_both",
        "ot_total_mass",
        "ot_cost",
        "ot_n_splits",
    ):
        assert r[f"{m}_ci_low"] <= r[m] <= r[f"{m}_ci_high"], m
    again, _ = comparison_rows(S, st, W_a=W_a, W_b=W_b, null_pool=null_pool)
    assert again.equals(rows)  # seeded


def test_columns_do_not_depend_on_which_families_apply():
    S, _, _ = random_case(seed=3)
    st = Settings(thresholds=[0.6], bootstrap={"n": 20, "seed": 0})
    rows, _ = comparison_rows(S, st)  # no null model, no within-set matrices
    r = rows.iloc[0]
    assert np.isnan(r["significant_match_rate"])
    assert np.isnan(r["significant_match_rate_ci_low"]) and np.isnan(
        r["significant_match_rate_ci_high"]
    )
