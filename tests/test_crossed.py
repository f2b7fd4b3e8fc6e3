"""The verdict over runs, analysts and themes (metrics/verdicts/crossed.py,
metrics/verdicts/generators.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2
from scipy.stats import t as student

from themesim.metrics.verdicts.analyst_margin import analysts_spread
from themesim.metrics.verdicts.crossed import (
    MIN_GROUPS,
    Crossed,
    crossed_difference,
    settle,
    verdict,
    word,
)
from themesim.metrics.verdicts.generators import (
    generator_rows,
    generators_of,
    partners,
    segment_kappas,
)
from themesim.metrics.verdicts.paired import paired_interval

NAN = np.nan


def test_two_analysts_one_run_by_hand():
    # d per theme: analyst 0 (0, -0.6, 0.6), analyst 1 (0.6, 0, -0.6): D = 0; deleting theme
    # t of analyst r moves D to -d/4, so the jackknife variance is 5/6 * 4 * 0.15**2
    gen = [np.array([[0.8], [0.2], [0.8]]), np.array([[0.8], [0.8], [0.2]])]
    hum = [np.array([[NAN, 0.8], [NAN, 0.8], [NAN, 0.2]]),
           np.array([[0.2, NAN], [0.8, NAN], [0.8, NAN]])]  # fmt: skip
    res = crossed_difference(gen, hum, alpha=0.05)
    assert res.difference == pytest.approx(0.0)
    assert res.var_themes == pytest.approx(5 / 6 * 4 * 0.0225)
    assert res.var_runs == 0.0 and res.var_analysts == 0.0 and res.df == 5
    half = student.ppf(0.95, 5) * np.sqrt(5 / 6 * 4 * 0.0225)
    assert (res.ci_low, res.ci_high) == pytest.approx((-half, half))
    assert res.covers == ("themes",) and np.isnan(res.run_sd)
    assert (res.generator, res.human) == pytest.approx((0.6, 0.6))


def test_one_set_two_analysts_matched_is_the_pooled_paired_table():
    from themesim.metrics.verdicts.equivalence import equivalence_test

    gen = [np.array([[1], [0], [1], [1]]), np.array([[1], [0], [0]])]
    hum = [np.array([[NAN, 1], [NAN, 1], [NAN, 0], [NAN, 1]]),
           np.array([[0, NAN], [1, NAN], [1, NAN]])]  # fmt: skip
    res = crossed_difference(gen, hum, alpha=0.05)
    x = np.array([1, 0, 1, 1, 1, 0, 0], bool)
    y = np.array([1, 1, 0, 1, 0, 1, 1], bool)
    t = equivalence_test(x, y, 0.1, 0.05)
    assert res.difference == t["difference"] == pytest.approx(-1 / 7)
    assert (res.ci_low, res.ci_high) == (t["difference_ci_low"], t["difference_ci_high"])
    assert res.ci_method.startswith("pooled paired table, paired score")
    assert (res.generator, res.human) == pytest.approx((4 / 7, 5 / 7))
    # declared groups: the same table, its counts divided by the design effect (the
    # delete-a-group jackknife variance of the difference over the delete-a-theme one)
    # diff 0 -1 1 0 1 -1 -1: group 0 {0, 3}: 0 0; group 1 {1, 5, 6}: -1 -1 -1; 2 {2, 4}: 1 1
    groups = [np.array([0, 1, 2, 0]), np.array([2, 1, 1])]
    grouped = crossed_difference(gen, hum, clusters=groups)
    diff = x.astype(float) - y.astype(float)
    loo_theme = (diff.sum() - diff) / 6
    v_theme = 6 / 7 * ((loo_theme - loo_theme.mean()) ** 2).sum()
    loo_group = np.array([-1 / 5, 2 / 4, -3 / 5])  # without group 0, 1, 2
    v_group = 2 / 3 * ((loo_group - loo_group.mean()) ** 2).sum()
    deff = v_group / v_theme
    assert deff == pytest.approx(0.62 * 2 / 3 / v_theme) and deff > 7 / 3
    # capped at three effective themes (7 / 3): the score needs two
    lo, hi = paired_interval(*(np.array([2, 2, 3, 0]) / (7 / 3)), 0.90)  # both, x, y, neither
    assert (grouped.ci_low, grouped.ci_high) == pytest.approx((float(lo), float(hi)))
    assert grouped.ci_high - grouped.ci_low > res.ci_high - res.ci_low
    assert grouped.difference == pytest.approx(-1 / 7) and grouped.n_clusters == 3
    assert "design effect" in grouped.ci_method
    # three groups are under MIN_GROUPS: the interval stands, the word is withheld
    assert grouped.withheld.startswith("3 declared groups")
    assert word(grouped, 0.1) == "inconclusive" and word(res, 0.1) == "inconclusive"


def test_a_word_is_withheld_below_min_groups_only():
    rng = np.random.default_rng(5)
    k, n = 3, 12
    gen = [rng.uniform(0.0, 0.2, size=(n, 2)) for _ in range(k)]
    hum = []
    for r in range(k):
        h = rng.uniform(0.8, 1.0, size=(n, k))
        h[:, r] = NAN
        hum.append(h)
    # far below the analysts: worse, unless the groups are too few
    assert word(crossed_difference(gen, hum), 0.1) == "worse"
    few = crossed_difference(gen, hum, clusters=[np.arange(n) % 4] * k)
    many = crossed_difference(gen, hum, clusters=[np.arange(n) % MIN_GROUPS] * k)
    assert few.ci_high < 0 and word(few, 0.1) == "inconclusive" and few.withheld
    assert word(many, 0.1) == "worse" and many.withheld == ""


def test_runs_and_analysts_each_add_their_jackknife():
    rng = np.random.default_rng(3)
    k, n, runs = 3, 6, 4
    gen = [rng.uniform(size=(n, runs)) for _ in range(k)]
    hum = []
    for r in range(k):
        h = rng.uniform(size=(n, k))
        h[:, r] = NAN
        hum.append(h)
    res = crossed_difference(gen, hum)
    # runs: D is linear in each run's mean over the analysts' themes
    per_run = np.mean([g.mean(axis=0) for g in gen], axis=0)
    loo = (per_run.sum() - per_run) / (runs - 1)
    expected = (runs - 1) / runs * ((loo - loo.mean()) ** 2).sum()
    assert res.var_runs == pytest.approx(expected)
    assert res.run_sd == pytest.approx(per_run.std(ddof=1))

    # analysts as comparators: analyst j deleted from the others' human means
    def without(j):
        return np.mean(
            [gen[r].mean() - hum[r][:, [h for h in range(k) if h not in (r, j)]].mean()
             for r in range(k)]
        )  # fmt: skip

    loa = np.array([without(j) for j in range(k)])
    comp = (k - 1) / k * ((loa - loa.mean()) ** 2).sum()
    # as references: each analyst's own term, beyond what its themes' noise explains; here
    # below 0, and taken off the comparators' part (the sum is clipped, not each part)
    own = np.array([gen[r].mean() - np.nanmean(hum[r]) for r in range(k)])
    loo = (own.sum() - own) / (k - 1)
    ref = (k - 1) / k * ((loo - loo.mean()) ** 2).sum() - res.var_themes
    assert ref < 0 < comp + ref
    assert res.var_analysts == pytest.approx(comp + ref)
    assert res.covers == ("themes", "runs", "analysts")

    # each cell's own noise is in the theme part and in the run (analyst) part: counted once
    def noise(t):
        resid = t - t.mean(1, keepdims=True) - t.mean(0, keepdims=True) + t.mean()
        return (resid**2).sum() / ((t.shape[0] - 1) * (t.shape[1] - 1)) / t.size

    cells = sum(noise(g) + noise(np.delete(h, r, axis=1)) for r, (g, h) in
                enumerate(zip(gen, hum, strict=True))) / k**2  # fmt: skip
    parts = res.var_themes + res.var_runs + res.var_analysts
    assert res.se == pytest.approx(np.sqrt(max(parts - cells, res.var_themes, res.var_runs,
                                               res.var_analysts)))  # fmt: skip
    # each part at its own t quantile (Banerjee): themes 17, runs 3, analysts 2 df
    q = {f: student.ppf(0.95, f) for f in (17, 3, 2)}
    half = np.sqrt(q[17] ** 2 * (res.var_themes - cells) + q[3] ** 2 * res.var_runs
                   + q[2] ** 2 * res.var_analysts)  # fmt: skip
    assert res.ci_high - res.difference == pytest.approx(half)
    assert res.difference - res.ci_low == pytest.approx(half)
    # difference_df: the one t reading of the whole variance that gives the same interval
    assert student.ppf(0.95, res.df) * res.se == pytest.approx(half)
    assert res.df < 17


def test_declared_groups_are_deleted_from_every_analyst_at_once():
    # strengths, not 0/1 (one set, two analysts and 0/1 read the pooled paired table)
    gen = [np.array([[0.9], [0.9], [0.1], [0.1]])] * 2
    hum = [
        np.array([[NAN, 0.9], [NAN, 0.9], [NAN, 0.9], [NAN, 0.9]]),
        np.array([[0.9, NAN], [0.9, NAN], [0.9, NAN], [0.9, NAN]]),
    ]
    groups = [np.array(["a", "a", "b", "b"])] * 2
    res = crossed_difference(gen, hum, clusters=groups)
    assert res.difference == pytest.approx(-0.4) and res.n_clusters == 2
    # without group a: D = -0.8; without b: D = 0; jackknife 1/2 * 2 * 0.4**2
    assert res.var_themes == pytest.approx(0.16) and res.df == pytest.approx(1)
    alone = crossed_difference(gen, hum)
    assert alone.n_clusters == 8 and alone.var_themes < res.var_themes


def test_a_shift_shared_by_a_groups_themes_leaves_the_reference_part_alone():
    # a declared group's shift common to every reference analyst moves D's theme part, not
    # how the analysts' own terms vary: those hold only their themes' noise within groups
    rng = np.random.default_rng(5)
    k, n, runs = 4, 12, 3
    groups = [np.arange(n) % 6] * k
    gen = [rng.uniform(0.2, 0.6, size=(n, runs)) for _ in range(k)]
    hum = []
    for r in range(k):
        h = rng.uniform(0.2, 0.6, size=(n, k)) + [0.2, -0.1, 0.05, -0.15]  # the comparators'
        h[:, r] = NAN
        hum.append(h)
    shift = np.array([0.35, -0.15, 0.2, -0.1, 0.3, 0.0])[groups[0]][:, None]
    base = crossed_difference(gen, hum, clusters=groups)
    moved = crossed_difference([g + shift for g in gen], hum, clusters=groups)
    assert moved.var_themes > 2 * base.var_themes
    assert moved.var_analysts == pytest.approx(base.var_analysts)
    assert base.var_analysts > 0
    # by hand: per-theme D about its group's mean, pooled over the 48 themes in 6 groups
    x = np.concatenate([g.mean(1) - np.nanmean(h, 1) for g, h in zip(gen, hum, strict=True)])
    label = np.tile(groups[0], k)
    means = np.array([x[label == c].mean() for c in range(6)])
    s2 = ((x - means[label]) ** 2).sum() / (k * n - 6)
    own = np.array([g.mean() - np.nanmean(h) for g, h in zip(gen, hum, strict=True)])
    loo = (own.sum() - own) / (k - 1)
    ref = (k - 1) / k * ((loo - loo.mean()) ** 2).sum() - s2 / n / k

    def without(j):
        return np.mean([gen[r].mean() - np.delete(hum[r], [r, j], axis=1).mean() for r in range(k)])

    loa = np.array([without(j) for j in range(k)])
    comp = (k - 1) / k * ((loa - loa.mean()) ** 2).sum()
    assert base.var_analysts == pytest.approx(max(comp + ref, 0.0))


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="2 or more analysts"):
        crossed_difference([np.ones((3, 1))], [np.ones((3, 1))])
    with pytest.raises(ValueError, match="missing"):
        crossed_difference([np.array([[NAN], [1.0]]), np.ones((2, 1))], [np.full((2, 2), 0.5)] * 2)


def test_words():
    assert verdict(0.01, 0.3, 0.1) == "better"
    assert verdict(-0.05, 0.3, 0.1) == "non-inferior"
    assert verdict(-0.3, -0.2, 0.1) == "worse"
    assert verdict(-0.3, 0.2, 0.1) == "inconclusive"


def _themes(partner: dict) -> pd.DataFrame:
    """themes.csv rows: (set_a, set_b) -> per-A-theme Hungarian similarity (side a)."""
    rows = []
    for (a, b), sims in partner.items():
        for i, s in enumerate(sims):
            rows.append({"set_a": a, "set_b": b, "side": "a", "theme_id": f"{a}{i}",
                         "hungarian_similarity": s})  # fmt: skip
            rows.append({"set_a": a, "set_b": b, "side": "b", "theme_id": f"{b}{i}",
                         "hungarian_similarity": s})  # fmt: skip
    return pd.DataFrame(rows)


def test_generator_rows_read_each_analyst_in_turn_and_either_direction():
    # h1 vs h2 is made once (h1 as A): h2's themes read its side b
    th = _themes(
        {
            ("h1", "h2"): [0.9, 0.8, 0.2],
            ("h1", "r1"): [0.9, 0.3, 0.2],
            ("h1", "r2"): [0.7, 0.6, 0.1],
            ("h2", "r1"): [0.8, 0.1, 0.1],
            ("h2", "r2"): [0.9, 0.2, 0.6],
        }
    )
    assert list(partners(th, "h2", "h1")) == [0.9, 0.8, 0.2]
    comp = pd.DataFrame(
        [{"set_a": "h1", "set_b": b, "threshold": 0.5, "op": "ge"} for b in ("h2", "r1", "r2")]
    )
    gens = generators_of(["h1", "h2", "r1", "r2"], ["h1", "h2"], {"llm": ["r1", "r2"]})
    assert gens == {"llm": ["r1", "r2"]}
    rows = generator_rows({"m": comp}, {"m": th}, analysts=["h1", "h2"], generators=gens,
                          margin=0.1, alpha=0.05)  # fmt: skip
    by = {r["evidence"]: r for r in rows}
    # matched at 0.5: h1's themes: runs (1,1),(0,1),(0,0) -> 0.5; h2 (1,1),(0,0),(0,1) -> 0.5
    # analysts: h1 by h2 2/3, h2 by h1 2/3
    assert by["matched"]["agreement"] == pytest.approx(0.5)
    assert by["matched"]["human_human"] == pytest.approx(2 / 3)
    assert by["matched"]["difference"] == pytest.approx(0.5 - 2 / 3)
    assert by["matched"]["n_runs"] == 2 and by["matched"]["n_analysts"] == 2
    # two runs are fixed (MIN_RANDOM_RUNS): the verdict is about these two, their spread shown
    assert by["matched"]["covers"] == "themes" and by["matched"]["run_sd"] > 0
    assert by["strength"]["agreement"] == pytest.approx(
        np.mean([0.9, 0.3, 0.2, 0.7, 0.6, 0.1, 0.8, 0.1, 0.1, 0.9, 0.2, 0.6])
    )
    assert by["strength"]["leads"] and not by["matched"]["leads"]


def test_a_missing_comparison_gives_no_generator_verdict():
    th = _themes({("h1", "h2"): [0.9, 0.8], ("h1", "r1"): [0.9, 0.3]})  # no h2 vs r1
    comp = pd.DataFrame([{"set_a": "h1", "set_b": "r1", "threshold": 0.5, "op": "ge"}])
    rows = generator_rows({"m": comp}, {"m": th}, analysts=["h1", "h2"],
                          generators={"r1": ["r1"]}, margin=0.1, alpha=0.05)  # fmt: skip
    assert rows and all(r["verdict"] == "" for r in rows)


def test_three_analysts_read_the_margin_from_their_spread():
    sims = {
        ("h1", "h2"): [0.9, 0.8, 0.7, 0.6], ("h1", "h3"): [0.5, 0.4, 0.3, 0.2],
        ("h2", "h3"): [0.6, 0.5, 0.3, 0.1], ("h1", "r1"): [0.9, 0.3, 0.2, 0.5],
        ("h2", "r1"): [0.8, 0.1, 0.1, 0.4], ("h3", "r1"): [0.2, 0.7, 0.6, 0.3],
    }  # fmt: skip
    th = _themes(sims)
    comp = pd.DataFrame(
        [{"set_a": "h1", "set_b": b, "threshold": 0.5, "op": "ge"} for b in ("h2", "h3", "r1")]
    )
    kw = dict(analysts=["h1", "h2", "h3"], generators={"r1": ["r1"]}, margin=0.1, alpha=0.05)
    mine = {r["evidence"]: r for r in generator_rows({"m": comp}, {"m": th}, **kw)}
    fixed = {
        r["evidence"]: r
        for r in generator_rows({"m": comp}, {"m": th}, margin_from="convention", **kw)
    }
    for route in ("strength", "matched"):
        r, c = mine[route], fixed[route]
        # the same interval, read against the analysts' bound or the convention
        assert r["difference_ci_low"] == c["difference_ci_low"]
        assert r["margin_source"] == "analysts" and c["margin_source"] == "convention"
        assert c["margin"] == 0.1 and r["margin"] == r["margin_analysts_low"]
        assert 0 <= r["margin_analysts_low"] <= r["margin_analysts"]
        assert r["verdict"] == verdict(r["difference_ci_low"], r["difference_ci_high"],
                                       r["margin"])  # fmt: skip

    # the strength route's cells (rows: h1's, h2's, h3's themes; columns: comparators)
    def cells(x, y, at):
        t = np.column_stack([sims[x], sims[y]])
        return np.insert(t, at, NAN, axis=1)

    hum = [cells(("h1", "h2"), ("h1", "h3"), 0), cells(("h1", "h2"), ("h2", "h3"), 1),
           cells(("h1", "h3"), ("h2", "h3"), 2)]  # fmt: skip
    assert mine["strength"]["margin_analysts"] == pytest.approx(analysts_spread(hum)[0])


def _res(**kw):
    base = dict(difference=-0.2, ci_low=-0.4, ci_high=0.0, level=0.9, generator=0.5,
                human=0.7, se=0.1, df=np.inf, var_themes=0.01, var_runs=0.0,
                var_analysts=0.0, n_runs=1, n_analysts=2, n_themes=20, n_clusters=20,
                run_sd=NAN, analyst_sd=NAN)  # fmt: skip
    return Crossed(**(base | kw))


def test_what_would_settle_an_open_verdict():
    # worse needs t(19) * se < 0.2 (20 theme units): se^2 < (0.2 / 1.7291)^2 = 0.013379,
    # themes 10 * 0.01 / 0.013379 -> 8 per analyst
    q19 = student.ppf(0.95, 19)
    s = settle(_res(), 0.1)
    assert (s["settle_verdict"], s["settle_themes"]) == ("worse", 8.0)
    assert s["settle_themes"] == np.ceil(10 * q19**2 * 0.01 / 0.2**2)
    assert np.isnan(s["settle_runs"])  # one run: its part is unknown
    # near 0: equivalence is nearer; the runs' part can settle it too, its quantile falling
    # with the runs it adds
    s = settle(_res(difference=0.01, var_runs=0.0005, var_themes=0.001, n_runs=3), 0.1)
    assert s["settle_verdict"] == "equivalent"
    room, q2 = 0.09**2, student.ppf(0.95, 2)
    assert s["settle_themes"] == np.ceil(10 * q19**2 * 0.001 / (room - q2**2 * 0.0005)) == 8
    left = room - q19**2 * 0.001
    runs = next(n for n in range(4, 1000) if student.ppf(0.95, n - 1) ** 2 * 0.0015 / n <= left)
    assert s["settle_runs"] == runs == 4
    # a run part the room cannot hold at three runs' quantile: themes alone cannot settle it
    s = settle(_res(difference=0.01, var_runs=0.002, var_themes=0.001, n_runs=3), 0.1)
    assert np.isnan(s["settle_themes"]) and s["settle_runs"] > 3
    # an analysts' part larger than the room: no number of themes or runs alone
    s = settle(_res(difference=0.01, var_analysts=0.01, n_analysts=3), 0.1)
    assert np.isnan(s["settle_themes"]) and np.isnan(s["settle_runs"])


def test_the_analysts_spread_is_their_sd_as_comparators_by_hand():
    # no cell noise: analyst h finds each theme of the others at strength 0.1, 0.3, 0.5 as
    # comparator. The comparator SD is that of (0.1, 0.3, 0.5) = 0.2; its 95 % lower bound
    # reads the comparators' sum of squares at chi^2(2) 5.991: 0.2 sqrt(2 / 5.991) = 0.1156.
    g = (0.1, 0.3, 0.5)
    hum = []
    for r in range(3):
        h = np.tile(np.array(g, dtype=float), (4, 1))
        h[:, r] = NAN
        hum.append(h)
    spread, low = analysts_spread(hum, alpha=0.05)
    assert spread == pytest.approx(0.2)
    assert low == pytest.approx(0.2 * np.sqrt(2 / chi2.isf(0.05, 2)))
    assert low == pytest.approx(0.11556, abs=1e-5)
    assert all(np.isnan(analysts_spread(hum[:2])))


def test_the_analysts_spread_takes_the_cells_noise_out():
    # every comparator alike but for theme-by-comparator noise: the spread is the noise's,
    # and what it leaves once that is taken out is small
    rng = np.random.default_rng(3)
    k, n = 4, 200
    hum = []
    for r in range(k):
        h = (rng.random((n, k)) < 0.6).astype(float)
        h[:, r] = NAN
        hum.append(h)
    raw = np.std([np.nanmean([hum[r][:, c].mean() for r in range(k) if r != c])
                  for c in range(k)], ddof=1)  # fmt: skip
    spread, low = analysts_spread(hum)
    assert low == 0.0
    assert spread < raw


def test_segment_kappas_follow_the_text_partner_in_either_direction():
    themes = pd.DataFrame(
        {
            "set_a": "h1", "set_b": "r1", "side": ["a", "a", "b"],
            "theme_id": ["H1", "H2", "R1"], "hungarian_partner_id": ["R1", None, "H1"],
            "hungarian_similarity": [0.8, np.nan, 0.8],
        }
    )  # fmt: skip
    pairs = pd.DataFrame(
        {
            "set_a": "h1", "set_b": "r1", "grounding_basis": ["coder", "coder", "evidence"],
            "a_id": ["H1", "H2", "H1"], "b_id": ["R1", "R1", "R1"], "kappa": [0.6, 0.1, 0.9],
        }
    )  # fmt: skip
    # H1's partner R1 at the coder's κ (not the analysts' own coding); H2 has no partner
    assert segment_kappas(themes, pairs, "h1", "r1").to_dict() == {"H1": 0.6, "H2": 0.0}
    assert segment_kappas(themes, pairs, "r1", "h1").to_dict() == {"R1": 0.6}
    assert segment_kappas(themes, pairs, "h1", "x") is None
    undefined = pairs.assign(kappa=[np.nan, 0.1, 0.9])  # the coder never applied H1 or R1
    assert segment_kappas(themes, undefined, "h1", "r1").to_dict() == {"H1": 0.0, "H2": 0.0}
    assert segment_kappas(themes, undefined, "h1", "r1").attrs["defined"] is False
    assert segment_kappas(themes, pairs, "h1", "r1").attrs["defined"] is True


def test_the_segments_route_gives_no_verdict_when_the_coder_applied_nothing():
    th = _themes({("h1", "h2"): [0.9, 0.4], ("h1", "r1"): [0.6, 0.2], ("h2", "r1"): [0.8, 0.1]})
    # each theme's partner: the same position in the other set
    th["hungarian_partner_id"] = [
        f"{b if side == 'a' else a}{t[-1]}"
        for a, b, side, t in zip(th["set_a"], th["set_b"], th["side"], th["theme_id"], strict=True)
    ]
    comp = pd.DataFrame([{"set_a": "h1", "set_b": "r1", "threshold": 0.5, "op": "ge"}])
    rows = []
    for a, b in (("h1", "h2"), ("h1", "r1"), ("h2", "r1")):
        for i in (0, 1):
            rows.append({"set_a": a, "set_b": b, "grounding_basis": "coder",
                         "a_id": f"{a}{i}", "b_id": f"{b}{i}", "kappa": np.nan})  # fmt: skip
    pairs = pd.DataFrame(rows)  # every κ undefined: the coder applied no theme
    out = generator_rows({"m": comp}, {"m": th}, analysts=["h1", "h2"],
                         generators={"r1": ["r1"]}, margin=0.1, alpha=0.05,
                         segments={"m": pairs})  # fmt: skip
    seg = next(r for r in out if r["evidence"] == "segments")
    assert seg["verdict"] == "" and "difference" not in seg
    assert seg["withheld"] == "the automatic coder applied none of these themes to any segment"
    # one κ defined: the others count as no agreement beyond chance, and a verdict is given
    pairs.loc[0, "kappa"] = 0.5
    out = generator_rows({"m": comp}, {"m": th}, analysts=["h1", "h2"],
                         generators={"r1": ["r1"]}, margin=0.1, alpha=0.05,
                         segments={"m": pairs})  # fmt: skip
    seg = next(r for r in out if r["evidence"] == "segments")
    assert seg["verdict"] != "" and seg["human_human"] == pytest.approx(0.25)


def test_the_strength_route_reads_p_match_through_the_isotonic_fit():
    th = _themes({("h1", "h2"): [0.9, 0.4], ("h1", "r1"): [0.6, 0.2], ("h2", "r1"): [0.8, 0.1]})
    comp = pd.DataFrame([{"set_a": "h1", "set_b": "r1", "threshold": 0.5, "op": "ge"}])
    fit = pd.DataFrame({"score": [0.0, 0.5, 1.0], "p_match": [0.0, 0.2, 1.0]})
    rows = generator_rows({"m": comp}, {"m": th}, analysts=["h1", "h2"],
                          generators={"r1": ["r1"]}, margin=0.1, alpha=0.05,
                          fits={"m": fit})  # fmt: skip
    strength = next(r for r in rows if r["evidence"] == "strength")
    # P at 0.6, 0.2 | 0.8, 0.1 (the run) and 0.9, 0.4 | 0.9, 0.4 (the analysts, both ways)
    p = np.interp([0.6, 0.2, 0.8, 0.1, 0.9, 0.4], [0, 0.5, 1], [0, 0.2, 1])
    assert strength["metric"] == "p_match"
    assert strength["agreement"] == pytest.approx(p[:4].mean())
    assert strength["human_human"] == pytest.approx(p[4:].mean())


def test_declared_groups_reach_the_generator_verdict():
    from themesim.metrics.verdicts.generators import clusters_of

    ids = [["a0", "a1", "a2"], ["b0", "b1"]]
    groups = {"h1": {"a0": "x", "a1": "y", "a2": None}, "h2": {"b0": "y", "b1": "x"}}
    got = clusters_of(["h1", "h2"], ids, groups)
    # one label per group across analysts; a theme without a group is a unit of its own
    assert [list(c) for c in got] == [["group:x", "group:y", "theme:h1:a2"],
                                      ["group:y", "group:x"]]  # fmt: skip
    assert clusters_of(["h1", "h2"], ids, {"h1": {"a0": None}}) is None
    assert clusters_of(["h1", "h2"], ids, None) is None
    th = _themes({("h1", "h2"): [0.9, 0.8, 0.2], ("h1", "r1"): [0.9, 0.3, 0.2],
                  ("h2", "r1"): [0.8, 0.1, 0.1]})  # fmt: skip
    comp = pd.DataFrame([{"set_a": "h1", "set_b": "r1", "threshold": 0.5, "op": "ge"}])
    declared = {
        "h1": {"h10": "x", "h11": "x", "h12": "y"},
        "h2": {"h20": "x", "h21": "y", "h22": "y"},
    }
    kw = dict(analysts=["h1", "h2"], generators={"r1": ["r1"]}, margin=0.1, alpha=0.05)
    plain = generator_rows({"m": comp}, {"m": th}, **kw)
    grouped = generator_rows({"m": comp}, {"m": th}, groups=declared, **kw)
    for a, b in zip(plain, grouped, strict=True):
        assert a["difference"] == pytest.approx(b["difference"])  # the same estimate
        assert a["withheld"] == ""
        assert b["withheld"].startswith("2 declared groups") and b["verdict"] == "inconclusive"


def test_transcript_counts_sum_to_the_whole_table():
    from themesim.metrics.grounding.grounding import transcript_counts

    A = np.array([[1, 0], [1, 1], [0, 1], [1, 0], [0, 0]], bool)
    B = np.array([[1], [0], [1], [1], [0]], bool)
    got = transcript_counts(A, B, ["a1", "a2"], ["b1"], ["t1", "t1", "t2", "t2", "t2"])
    t1 = got[got["transcript"] == "t1"].set_index("a_id")
    assert t1.loc["a1", ["n", "n_a", "n_b", "n_both"]].tolist() == [2, 2, 1, 1]
    assert t1.loc["a2", ["n", "n_a", "n_b", "n_both"]].tolist() == [2, 1, 1, 0]
    whole = got.groupby("a_id")[["n_a", "n_b", "n_both"]].sum()
    assert whole.loc["a1"].tolist() == [3, 3, 2] and whole.loc["a2"].tolist() == [2, 3, 1]


def test_the_segments_route_leaves_one_transcript_out_of_every_kappa():
    from sklearn.metrics import cohen_kappa_score

    from themesim.metrics.verdicts.generators import transcript_part

    rng = np.random.default_rng(11)
    sets = ["h1", "h2", "r1"]
    names = {s: [f"{s}_{i}" for i in range(3)] for s in sets}  # theme i pairs with theme i
    tr = np.repeat(["t1", "t2", "t3", "t4"], 12)
    codes = {s: rng.random((tr.size, 3)) < 0.35 for s in sets}
    for s in ("h2", "r1"):  # partly following h1's coding
        codes[s] = np.where(rng.random((tr.size, 3)) < 0.6, codes["h1"], codes[s])
    rows, counts = [], []
    for a, b in (("h1", "h2"), ("h1", "r1"), ("h2", "r1")):
        for i in range(3):
            for side, mine, theirs in (("a", a, b), ("b", b, a)):
                rows.append({"set_a": a, "set_b": b, "side": side, "theme_id": names[mine][i],
                             "hungarian_partner_id": names[theirs][i],
                             "hungarian_similarity": 0.8})  # fmt: skip
        from themesim.metrics.grounding.grounding import transcript_counts

        counts.append(transcript_counts(codes[a], codes[b], names[a], names[b], tr)
                      .assign(set_a=a, set_b=b))  # fmt: skip
    th, counts = pd.DataFrame(rows), pd.concat(counts, ignore_index=True)
    var, df, name = transcript_part(th, counts, ["h1", "h2"], ["r1"])

    def d_without(t):  # from the segments themselves, not the counts
        keep = tr != t
        k = {(x, y): [cohen_kappa_score(codes[x][keep, i], codes[y][keep, i]) for i in range(3)]
             for x, y in (("h1", "h2"), ("h1", "r1"), ("h2", "r1"))}  # fmt: skip
        # D = mean over references of [κ with the run - κ with the other analyst]
        return np.mean([np.mean(k[("h1", "r1")]) - np.mean(k[("h1", "h2")]),
                        np.mean(k[("h2", "r1")]) - np.mean(k[("h1", "h2")])])  # fmt: skip

    d = np.array([d_without(t) for t in ("t1", "t2", "t3", "t4")])
    assert var == pytest.approx(3 / 4 * ((d - d.mean()) ** 2).sum()) and var > 0
    assert (df, name) == (3, "transcripts")
    assert transcript_part(th, counts[counts["transcript"] != "t4"].query("transcript != 't3'"),
                           ["h1", "h2"], ["r1"]) is None  # fmt: skip


def test_an_extra_part_adds_its_variance_and_degrees_of_freedom():
    gen = [np.array([[0.9], [0.4], [0.7]]), np.array([[0.2], [0.6]])]
    hum = [np.array([[NAN, 0.8], [NAN, 0.5], [NAN, 0.9]]), np.array([[0.3, NAN], [0.9, NAN]])]
    plain = crossed_difference(gen, hum)
    more = crossed_difference(gen, hum, extra=(0.01, 3, "transcripts"))
    assert more.difference == plain.difference and more.covers == ("themes", "transcripts")
    assert more.se**2 == pytest.approx(plain.se**2 + 0.01) and more.var_extra == 0.01
    v_t, q_t = plain.se**2, student.ppf(0.95, 4)  # five theme units
    # on [0, 1] the interval is never narrower than the symmetric one; off it, it is that
    assert plain.ci_high - plain.difference >= q_t * plain.se * (1 - 1e-12)
    wide = crossed_difference([2 * g for g in gen], [2 * h for h in hum])
    assert wide.ci_high - wide.difference == pytest.approx(q_t * wide.se)
    assert wide.se == pytest.approx(2 * plain.se)
    half = np.sqrt(q_t**2 * v_t + student.ppf(0.95, 3) ** 2 * 0.01)
    assert more.ci_high - more.difference == pytest.approx(half)
    assert more.df_extra == 3


def test_wilson_limits_are_the_score_interval_of_a_share():
    from statsmodels.stats.proportion import proportion_confint

    from themesim.metrics.verdicts.score_limits import wilson

    z = student.ppf(0.95, np.inf)
    for count, n in ((9, 10), (3, 12), (20, 25)):
        p = count / n
        lo, hi = wilson(p, z * np.sqrt(p * (1 - p) / n))
        want = proportion_confint(count, n, alpha=0.10, method="wilson")
        assert (lo, hi) == pytest.approx(want, abs=1e-12)
    assert wilson(1.0, 0.0) == (1.0, 1.0)


def test_wedderburn_limits_solve_their_score_equation():
    from themesim.metrics.verdicts.score_limits import wedderburn, wilson

    for p, half in ((0.88, 0.05), (0.1, 0.03), (0.5, 0.2), (0.98, 0.01)):
        lo, hi = wedderburn(p, half)
        scale = p * (1 - p)
        # the spread read at the limit: SD proportional to mu (1 - mu)
        assert p - lo == pytest.approx(half * lo * (1 - lo) / scale, abs=1e-12)
        assert hi - p == pytest.approx(half * hi * (1 - hi) / scale, abs=1e-12)
        assert 0 < lo < p < hi < 1
        assert wedderburn(1 - p, half) == pytest.approx((1 - hi, 1 - lo))
        if p > 0.5:  # toward the middle it reaches further than Wilson's, toward 1 less
            w_lo, w_hi = wilson(p, half)
            assert p - lo > p - w_lo and hi - p < w_hi - p


def test_limits_between_wilson_and_wedderburn_solve_their_score_equation():
    from themesim.metrics.verdicts.score_limits import between, wedderburn, wilson

    for p, half in ((0.88, 0.05), (0.1, 0.03), (0.5, 0.2), (0.98, 0.01)):
        lo, hi = between(p, half)
        scale = p * (1 - p)
        # the spread read at the limit: SD proportional to (mu (1 - mu))^0.75
        assert p - lo == pytest.approx(half * (lo * (1 - lo) / scale) ** 0.75, abs=1e-9)
        assert hi - p == pytest.approx(half * (hi * (1 - hi) / scale) ** 0.75, abs=1e-9)
        assert between(1 - p, half) == pytest.approx((1 - hi, 1 - lo), abs=1e-9)
        # each limit lies between Wilson's and Wedderburn's
        (w_lo, w_hi), (d_lo, d_hi) = wilson(p, half), wedderburn(p, half)
        assert min(w_lo, d_lo) < lo < max(w_lo, d_lo) and min(w_hi, d_hi) < hi < max(w_hi, d_hi)


def _near_bound(seed, k, runs, generator, analysts):
    """Strengths clipped to [0, 1]: gen[r] (12 themes x runs) around generator (SD 0.04),
    hum[r] (12 themes x k, column r NaN) around analysts (SD 0.12)."""
    rng = np.random.default_rng(seed)
    gen = [np.clip(generator + rng.normal(0, 0.04, (12, runs)), 0, 1) for _ in range(k)]
    hum = [np.clip(analysts + rng.normal(0, 0.12, (12, k)), 0, 1) for _ in range(k)]
    for r in range(k):
        hum[r][:, r] = NAN
    return gen, hum


def test_two_analysts_continuous_evidence_take_wedderburn_limits():
    gen, hum = _near_bound(5, 2, 3, 0.9, 0.8)
    assert "Wedderburn" in crossed_difference(gen, hum).ci_method
    # a third analyst brings an analyst part; 0/1 evidence follows the binomial relation
    assert "Wedderburn" not in crossed_difference(*_near_bound(5, 3, 3, 0.9, 0.8)).ci_method
    binary = crossed_difference([(g > 0.9).astype(float) for g in gen],
                                [np.where(np.isnan(h), NAN, h > 0.8) for h in hum])  # fmt: skip
    assert "Wedderburn" not in binary.ci_method and "Wilson" in binary.ci_method


def test_declared_groups_at_three_analysts_take_the_limits_between():
    gen, hum = _near_bound(5, 3, 3, 0.9, 0.8)
    groups = [np.arange(12) % 6] * 3
    assert "between Wilson's and Wedderburn's" in crossed_difference(gen, hum, groups).ci_method
    # without groups, with two analysts (Wedderburn's) or with 0/1 evidence: not these limits
    assert "between" not in crossed_difference(gen, hum).ci_method
    two = crossed_difference(*_near_bound(5, 2, 3, 0.9, 0.8), [np.arange(12) % 6] * 2)
    assert "Wedderburn limits" in two.ci_method
    binary = crossed_difference([(g > 0.9).astype(float) for g in gen],
                                [np.where(np.isnan(h), NAN, h > 0.8) for h in hum],
                                groups)  # fmt: skip
    assert "between" not in binary.ci_method


def test_a_zero_one_side_without_spread_keeps_its_themes_room():
    # both analysts match every theme of the other: their side is 1 with no spread, yet it
    # rests on 12 themes, so D's interval opens upwards by at least Wilson's room at 12/12
    gen = [np.array([[1, 0], [1, 1], [0, 1], [1, 1], [1, 0], [0, 0]], float) for _ in range(2)]
    hum = [np.array([[NAN, 1]] * 6), np.array([[1, NAN]] * 6)]
    res = crossed_difference(gen, hum)
    c = student.ppf(0.95, 11) ** 2 / 12  # twelve theme units
    assert res.human == 1.0
    assert res.ci_high - res.difference >= c / (1 + c) - 1e-12
    wide = crossed_difference([2 * g for g in gen], [2 * h for h in hum])  # off [0, 1]
    assert res.ci_high - res.difference > 1.05 * (wide.ci_high - wide.difference) / 2


def test_near_a_bound_the_interval_reaches_further_on_the_open_side():
    # the analysts' strengths bunch near 1: D's interval opens upwards (their far side)
    gen, hum = _near_bound(4, 2, 1, 0.95, 0.85)
    res = crossed_difference(gen, hum)
    wide = crossed_difference([2 * g for g in gen], [2 * h for h in hum])  # off [0, 1]
    symmetric = (wide.ci_high - wide.difference) / 2
    assert res.ci_high - res.difference > symmetric * 1.02
    assert res.difference - res.ci_low == pytest.approx(symmetric)  # never narrower
    # the reflected scale (1 - strength) gives the reflected interval
    flip = crossed_difference([1 - g for g in gen], [1 - h for h in hum])
    assert (flip.ci_low, flip.ci_high) == pytest.approx((-res.ci_high, -res.ci_low))
