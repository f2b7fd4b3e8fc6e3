"""verdicts.csv's generator rows (metrics/verdicts/rows.py): the routes' evidence, one
primary row per generator, the false discovery rate across generators, the one-analyst
row."""

import numpy as np
import pytest

from themesim.metrics.thresholds import Thresholds
from themesim.metrics.verdicts.difference import verdict
from themesim.metrics.verdicts.rows import (
    MethodData,
    Settings,
    adjust_primary,
    default_primary,
    generator_rows,
    route_table,
)
from themesim.study.groups import generators_of


def _method(name="m", values=(0.5,), sources=None, seed=0, sizes=None, quality=None):
    """A method whose similarity tables are drawn once per pair of sets (fixed by seed)."""
    rng = np.random.default_rng(seed)
    sizes = sizes or {}
    quality = quality or {}
    cache = {}

    def similarity(a, b):
        if (a, b) not in cache:
            n, m = sizes.get(a, 6), sizes.get(b, 6)
            base = rng.uniform(0.0, 0.45, (n, m))
            for i in range(min(n, m)):  # a diagonal of partners
                partner = 0.35 + 0.3 * quality.get(a, 1.0) * quality.get(b, 1.0)
                base[i, i] = partner + rng.normal(0, 0.1)
            cache[(a, b)] = base
            cache[(b, a)] = base.T
        return cache[(a, b)]

    th = Thresholds(list(values), sources or ["config"] * len(values), "cosine", False, "ge")
    return MethodData(name, th, similarity)


def test_the_routes_read_the_pairs_whole_table():
    m = _method()
    ev, order = route_table(m, "matched", 0.5, "a", "b")
    S = m.similarity("a", "b")
    assert np.array_equal(ev, (S >= 0.5).astype(float))
    assert np.array_equal(order, S)
    strength, _ = route_table(m, "strength", 0.5, "a", "b")
    assert np.array_equal(strength, S)


def test_the_default_primary_is_the_first_fixed_threshold_on_the_matched_route():
    fitted = _method("mpnet", values=(0.7, 0.62), sources=["calibrated (F1-max)", "config"])
    other = _method("minilm", values=(0.56,))
    assert default_primary([fitted, other], ["mpnet", "minilm"]) == {
        "method": "mpnet", "route": "matched", "threshold": 0.62,
    }  # fmt: skip
    only_fitted = _method("x", values=(0.7,), sources=["calibrated (F1-max)"])
    assert default_primary([only_fitted], ["x"]) is None


def test_one_primary_row_per_generator_and_the_rest_sensitivity():
    m = _method(values=(0.5, 0.6))
    gens = {"llm": ["llm"], "runs": ["r1", "r2", "r3"]}
    rows = generator_rows(
        [m], reference="h", analysts=["h", "hb", "hc"], generators=gens,
        settings=Settings(margin=0.1, alpha=0.05, primary={"method": "m", "route": "matched",
                                                            "threshold": 0.6}),
    )  # fmt: skip
    assert len(rows) == 2 * 2 * 2  # thresholds x routes (no segments) x generators
    prim = [r for r in rows if r["primary"]]
    assert sorted(r["set_b"] for r in prim) == ["llm", "runs"]
    assert all(r["threshold"] == 0.6 and r["evidence"] == "matched" for r in prim)
    assert {r["analysis"] for r in rows if not r["primary"]} == {"sensitivity"}
    assert all("p_adjusted" in r for r in prim)
    # sensitivity rows read their own interval's word
    for r in rows:
        if not r["primary"]:
            assert r["verdict"] == verdict(r["difference_ci_low"], r["difference_ci_high"], 0.1)


def test_the_primary_words_are_read_at_the_false_discovery_rate():
    """Benjamini-Hochberg by hand: p = 0.01, 0.04 over two generators -> 0.02, 0.04; the
    second stays below 0.05 (better), and 0.03, 0.06 -> 0.06, 0.06: neither is better."""
    base = {"primary": True, "p_equivalent": 0.9, "p_worse": 0.9, "p_non_inferior": 0.001,
            "margin_source": "config"}  # fmt: skip
    rows = [dict(base, p_better=0.01), dict(base, p_better=0.04)]
    adjust_primary(rows, 0.05)
    assert [r["p_adjusted"] for r in rows] == pytest.approx([0.02, 0.04])
    assert [r["verdict"] for r in rows] == ["better", "better"]
    rows = [dict(base, p_better=0.03), dict(base, p_better=0.06)]
    adjust_primary(rows, 0.05)
    assert [r["verdict"] for r in rows] == ["non-inferior", "non-inferior"]
    assert rows[0]["p_value"] == 0.001  # the claim it reaches: non-inferiority


def test_one_analyst_gives_an_agreement_with_its_interval_and_no_word():
    rows = generator_rows(
        [_method(values=(0.65,))], reference="h", analysts=["h"], generators={"llm": ["llm"]},
        settings=Settings(margin=0.1, alpha=0.05, primary=None),
    )  # fmt: skip
    for r in rows:
        assert r["verdict"] == "" and r["withheld"].startswith("one analyst")
        assert r["agreement_ci_low"] < r["agreement"] < r["agreement_ci_high"]


def test_a_generator_that_writes_more_themes_is_read_at_the_smallest_set():
    m = _method(sizes={"llm": 14})
    rows = generator_rows(
        [m], reference="h", analysts=["h", "hb"], generators={"llm": ["llm"]},
        settings=Settings(margin=0.1, alpha=0.05),
    )  # fmt: skip
    r = rows[0]
    assert (r["n_themes_generator"], r["n_themes_analysts"], r["common_size"]) == (14, 6, 6)


def test_generators_of_a_study():
    assert generators_of(["h", "hb", "llm", "r1", "r2"], ["h", "hb"], {"g": ["r1", "r2"]}) == {
        "g": ["r1", "r2"], "llm": ["llm"],
    }  # fmt: skip
    # one analyst: every other set is a generator, never the reference
    assert generators_of(["h", "llm"], ["h"], {}) == {"llm": ["llm"]}
