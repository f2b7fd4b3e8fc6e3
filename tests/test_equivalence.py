"""The human-human reference and the equivalence verdict (metrics/verdicts/equivalence.py)."""

import numpy as np
import pandas as pd
import pytest

from themesim.metrics.comparison import Settings, comparison_rows, theme_rows
from themesim.metrics.settings import equivalence_settings
from themesim.metrics.verdicts.equivalence import (
    VERDICT_COLUMNS,
    equivalence_test,
    verdict,
    verdict_table,
)
from themesim.metrics.verdicts.paired import CONTINUITY, _score, paired_counts, paired_interval
from themesim.validate.equivalence import hungarian_matched

# ---------------------------------------------------------------- the interval


def test_scas_interval_equals_ratesci_on_fagerland_example():
    # Bentur et al. (Fagerland, Lydersen & Laake 2014, Table II): a=1, b=1, c=7, d=12.
    # ratesci's pairbinci(c(1, 1, 7, 12)) (SCAS, no continuity adjustment): -0.528113 to
    # -0.018422, and its score at theta 0 is -2.070197 (the N-1 McNemar test).
    lo, hi = paired_interval(1, 1, 7, 12, 0.95, cc=0.0)
    assert float(lo) == pytest.approx(-0.528113, abs=1e-6)
    assert float(hi) == pytest.approx(-0.018422, abs=1e-6)
    assert float(_score(0.0, 1, 1, 7, 12)) == pytest.approx(-2.070197, abs=1e-6)


def test_score_at_zero_is_the_n_minus_1_mcnemar_statistic_less_the_continuity_step():
    # At theta 0 the skewness term vanishes: (b - c) / sqrt((b + c) n / (n - 1)), with
    # |b - c| reduced by 2 gamma under the continuity adjustment.
    for a, b, c, d in [(5, 6, 2, 7), (0, 3, 9, 1), (12, 1, 0, 3)]:
        n = a + b + c + d
        mcnemar = (b - c) / np.sqrt((b + c) * n / (n - 1))
        assert float(_score(0.0, a, b, c, d)) == pytest.approx(mcnemar, rel=1e-9)
        shrunk = (abs(b - c) - 2 * CONTINUITY) * np.sign(b - c) / np.sqrt((b + c) * n / (n - 1))
        assert float(_score(0.0, a, b, c, d, CONTINUITY)) == pytest.approx(shrunk, rel=1e-9)


def test_interval_holds_the_estimate_widens_with_level_and_is_symmetric_under_swap():
    rng = np.random.default_rng(3)
    for _ in range(40):
        a, b, c, d = rng.integers(0, 9, size=4)
        if a + b + c + d < 2:
            continue
        est = (b - c) / (a + b + c + d)
        lo90, hi90 = paired_interval(a, b, c, d, 0.90)
        lo95, hi95 = paired_interval(a, b, c, d, 0.95)
        assert lo90 <= est <= hi90 and -1 <= lo95 <= lo90 and hi90 <= hi95 <= 1
        # swapping the two sets mirrors the interval (a and d kept)
        lo_s, hi_s = paired_interval(a, c, b, d, 0.90)
        assert lo_s == pytest.approx(-hi90, abs=1e-9) and hi_s == pytest.approx(-lo90, abs=1e-9)


def test_no_discordant_theme_needs_31_themes_for_equivalence_within_ten_points():
    # A set identical to the analyst's matching: the interval is +-x(n); with a margin of
    # 0.10 it fits only from 31 themes on (a valid test cannot do better than 29: 0.9^n must
    # fall below 0.05 when B matches every theme the analyst misses with probability 0.1).
    widths = {n: float(paired_interval(n, 0, 0, 0, 0.9)[1]) for n in (10, 30, 31)}
    assert widths[10] == pytest.approx(0.287, abs=1e-3)
    assert widths[30] > 0.1 > widths[31]


def test_verdict_rule():
    assert verdict(-0.09, 0.09, 0.1) == "equivalent"
    assert verdict(-0.1, 0.05, 0.1) == "inconclusive"  # the margin itself is not inside
    assert verdict(-0.09, 0.15, 0.1) == "non-inferior"
    assert verdict(-0.5, -0.11, 0.1) == "worse"
    assert verdict(-0.5, -0.01, 0.1) == "worse"  # wholly below 0 is worse, margin or not
    assert verdict(-0.5, 0.0, 0.1) == "inconclusive"  # 0 itself is inside
    assert verdict(0.12, 0.4, 0.1) == "better"
    assert verdict(0.01, 0.09, 0.1) == "equivalent"  # within the margin wins over better
    assert verdict(-0.09, -0.01, 0.1) == "equivalent"  # and over worse (docs/verdicts.md)
    assert verdict(float("nan"), 0.1, 0.1) == ""


def test_paired_counts_and_mismatched_units():
    x = np.array([1, 1, 0, 0, 1], bool)
    y = np.array([1, 0, 1, 0, 0], bool)
    assert paired_counts(x, y) == (1, 2, 1, 1)
    with pytest.raises(ValueError, match="same units"):
        paired_counts(x, y[:4])


# ---------------------------------------------------------------- hand-made studies


def _planted(n_a: int, matched, n_b: int, seed: int) -> np.ndarray:
    """S with one partner at 0.8 for each matched A theme, every other cell at most 0.3."""
    rng = np.random.default_rng(seed)
    S = rng.uniform(0.0, 0.3, size=(n_a, n_b))
    for k, i in enumerate(np.flatnonzero(matched)):
        S[i, k] = 0.8
    return S


def _tables(matrices: dict, reference: str = "human", theta: float = 0.5):
    """comparisons.csv and themes.csv rows of one method, made by the metrics' own code."""
    st = Settings(thresholds=[theta], bootstrap={"n": 20, "seed": 0})
    n_a = next(iter(matrices.values())).shape[0]
    a = pd.DataFrame({"theme_id": [f"H{i:02d}" for i in range(n_a)], "name": "h"})
    comps, themes = [], []
    for set_b, S in matrices.items():
        b = pd.DataFrame({"theme_id": [f"B{j:02d}" for j in range(S.shape[1])], "name": "b"})
        head = {"method": "m", "set_a": reference, "set_b": set_b}
        rows, extra = comparison_rows(S, st)
        rows.insert(1, "op", "ge")
        comps.append(pd.concat([pd.DataFrame([head] * len(rows)), rows], axis=1))
        tt = theme_rows(S, st, a, b, reused=extra)
        themes.append(pd.concat([pd.DataFrame([head] * len(tt)), tt], axis=1))
    return {"m": pd.concat(comps, ignore_index=True)}, {"m": pd.concat(themes, ignore_index=True)}


def test_a_copy_of_the_second_analyst_is_equivalent_and_a_set_matching_nothing_is_worse():
    n = 40
    analyst = np.arange(n) % 5 != 0  # 32 of 40 themes
    S_h = _planted(n, analyst, 36, seed=1)
    matrices = {
        "human_b": S_h,
        "llm_copy": S_h.copy(),
        "llm_none": np.random.default_rng(2).uniform(0.0, 0.3, size=(n, 12)),
    }
    comps, themes = _tables(matrices)
    table = verdict_table(comps, themes, reference="human", group=["human", "human_b"])
    assert list(table.columns) == VERDICT_COLUMNS
    by = table.set_index("set_b")
    assert by.loc["human_b", "role"] == "reference group" and by.loc["human_b", "verdict"] == ""
    copy, none = by.loc["llm_copy"], by.loc["llm_none"]
    assert copy["second_analyst"] == "human_b"
    assert (copy["n_matched"], copy["human_n_matched"], copy["n_a"]) == (32, 32, 40)
    assert copy["difference"] == 0.0 and copy["n_only_b"] == copy["n_only_human"] == 0
    assert -0.1 < copy["difference_ci_low"] < 0 < copy["difference_ci_high"] < 0.1
    # one set against one analyst is a description (`analysis` detail): its interval reads
    # equivalent, the verdict word belongs to the generator's primary row
    assert copy["analysis"] == "detail" and copy["verdict"] == "" and not copy["primary"]
    assert verdict(copy["difference_ci_low"], copy["difference_ci_high"], 0.1) == "equivalent"
    assert none["n_matched"] == 0 and none["n_only_human"] == 32
    assert none["difference"] == pytest.approx(-0.8)
    assert none["difference_ci_high"] < -0.1 and none["verdict"] == ""
    # the values beside the verdict are comparisons.csv's own cells
    comp = comps["m"].set_index("set_b")
    assert copy["human_human"] == comp.loc["human_b", "hungarian_coverage_a"] == 0.8
    assert copy["agreement_ci_low"] == comp.loc["llm_copy", "hungarian_coverage_a_ci_low"]
    assert copy["ci_method"].startswith("paired score")


def test_ten_reference_themes_cannot_show_equivalence_even_for_a_copy():
    analyst = np.arange(10) < 8
    S_h = _planted(10, analyst, 11, seed=4)
    comps, themes = _tables({"human_b": S_h, "copy": S_h.copy()})
    row = verdict_table(comps, themes, reference="human", group=["human", "human_b"])
    row = row[row["set_b"] == "copy"].iloc[0]
    assert row["difference"] == 0.0 and row["verdict"] == ""
    assert verdict(row["difference_ci_low"], row["difference_ci_high"], 0.1) == "inconclusive"
    assert row["difference_ci_high"] == pytest.approx(0.287, abs=1e-3)


def test_without_a_group_only_the_agreement_is_listed():
    S = _planted(6, np.arange(6) < 4, 6, seed=5)
    comps, themes = _tables({"llm": S})
    table = verdict_table(comps, themes, reference="human")
    r = table.iloc[0]
    assert (r["role"], r["second_analyst"], r["verdict"]) == ("compared", "", "")
    assert r["agreement"] == pytest.approx(4 / 6) and np.isnan(r["difference"])


def test_a_method_without_the_analysts_comparison_gives_no_verdict():
    S = _planted(6, np.arange(6) < 4, 6, seed=6)
    comps, themes = _tables({"llm": S})  # a method restricted to human vs llm
    r = verdict_table(comps, themes, reference="human", group=["human", "human_b"]).iloc[0]
    assert r["second_analyst"] == "human_b" and r["verdict"] == "" and np.isnan(r["human_human"])


def test_flags_from_themes_csv_equal_the_matrix_flags_and_disagreement_is_refused():
    S_h = _planted(8, np.arange(8) < 6, 8, seed=7)
    S_x = _planted(8, np.arange(8) % 2 == 0, 9, seed=8)
    comps, themes = _tables({"human_b": S_h, "x": S_x})
    r = verdict_table(comps, themes, reference="human", group=["human", "human_b"])
    r = r[r["set_b"] == "x"].iloc[0]
    x, y = hungarian_matched(S_x, 0.5), hungarian_matched(S_h, 0.5)
    test = equivalence_test(x, y)
    assert (r["n_both"], r["n_only_b"], r["n_only_human"], r["n_neither"]) == (3, 1, 3, 1)
    assert r["difference_ci_low"] == test["difference_ci_low"]
    # themes.csv from another run than comparisons.csv: one clear error, not a wrong verdict
    from themesim.errors import InputError

    broken = themes["m"].copy()
    broken.loc[(broken["set_b"] == "x") & (broken["side"] == "a"), "hungarian_similarity"] = 0.1
    with pytest.raises(InputError, match="Rerun the metrics rule"):
        verdict_table(comps, {"m": broken}, reference="human", group=["human", "human_b"])


# ---------------------------------------------------------------- settings


def test_equivalence_settings_keep_the_default_not_given():
    assert equivalence_settings({"margin": 0.2}) == {
        "margin": 0.2,
        "alpha": 0.05,
        "margin_from": "convention",
    }


def test_settings_out_of_range_are_refused():
    x = np.ones(5, bool)
    with pytest.raises(ValueError, match="alpha"):
        equivalence_test(x, x, 0.1, 0.5)
    with pytest.raises(ValueError, match="margin"):
        equivalence_test(x, x, 0.0, 0.05)


def test_reference_group_config_checks(tmp_path, monkeypatch):
    from themesim.config import prepare
    from themesim.errors import InputError

    monkeypatch.chdir(tmp_path)
    for name in ("h", "hb", "llm"):
        (tmp_path / f"{name}.csv").write_text("id,name,description\nT1,Work,Jobs and care\n")
    base = {
        "theme_sets": ["h.csv", "hb.csv", "llm.csv"],
        "reference": "h",
        "methods": {"tfidf": {}},
    }
    study = prepare(base | {"reference_group": ["hb", "h"], "equivalence": {"margin": 0.2}})
    assert study.reference_group == ["h", "hb"]  # the reference first
    assert study.equivalence == {"margin": 0.2, "alpha": 0.05, "margin_from": "convention"}
    assert prepare(base).reference_group == []
    from themesim.defaults import SCHEMA_PATH
    from themesim.schema import check_schema

    with pytest.raises(InputError, match=r"equivalence.margin_from: 'spread' is not allowed"):
        check_schema(base | {"equivalence": {"margin_from": "spread"}}, SCHEMA_PATH)
    with pytest.raises(InputError, match=r"reference_group: 'hx' is not a theme set \(did you"):
        prepare(base | {"reference_group": ["h", "hx"]})
    with pytest.raises(InputError, match="does not include the reference set 'h'"):
        prepare(base | {"reference_group": ["hb", "llm"]})
    with pytest.raises(InputError, match="needs at least 2"):
        prepare(base | {"reference_group": ["h"]})
    with pytest.raises(InputError, match="'h' is listed twice"):
        prepare(base | {"reference_group": ["h", "h", "hb"]})
    # every analyst is the reference in turn: hb vs llm is made as well
    assert study.pairs == [("h", "hb"), ("h", "llm"), ("hb", "llm")]
    assert study.generators == {"llm": ["llm"]}
    for name in ("r1", "r2"):
        (tmp_path / f"{name}.csv").write_text("id,name,description\nT1,Work,Jobs and care\n")
    runs = base | {"theme_sets": base["theme_sets"] + ["r1.csv", "r2.csv"]}
    mixed = {"reference_group": ["h", "hb"], "run_groups": {"g": ["hb", "r1"]}}
    with pytest.raises(InputError, match=r"run_groups.g: mixes analysts and runs: 'hb'"):
        prepare(runs | mixed)
    twice = {"run_groups": {"g": ["r1", "r2"], "f": ["r2", "llm"]}}
    with pytest.raises(InputError, match=r"run_groups.f: 'r2' is also in run group 'g'"):
        prepare(runs | twice)
    ok = prepare(runs | {"reference_group": ["h", "hb"], "run_groups": {"g": ["r1", "r2"]}})
    assert ok.generators == {"g": ["r1", "r2"], "llm": ["llm"]}


def test_a_partner_at_the_threshold_counts_under_ge_and_not_under_gt():
    from themesim.metrics.verdicts.equivalence import _matched_from_themes

    themes = pd.DataFrame(
        {
            "set_a": "human",
            "set_b": "x",
            "side": ["a", "a", "a", "b"],
            "theme_id": ["H1", "H2", "H3", "X1"],
            "hungarian_similarity": [0.5, 0.7, np.nan, 0.5],  # H3 has no partner
        }
    )
    ids = ["H3", "H1", "H2"]  # the flags follow the ids given
    ge = _matched_from_themes(themes, "human", "x", ids, 0.5, "ge")
    gt = _matched_from_themes(themes, "human", "x", ids, 0.5, "gt")
    assert ge.tolist() == [False, True, True] and gt.tolist() == [False, False, True]
    assert _matched_from_themes(themes, "human", "y", ids, 0.5, "ge") is None
