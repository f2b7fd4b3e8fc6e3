"""Krippendorff's unitizing α family (metrics/agreement/unitizing.py) against published values."""

import krippendorff
import numpy as np
import pytest

from themesim.io.codings import merge
from themesim.metrics.agreement.unitizing import (
    binary_u_alpha,
    intersect,
    u_alpha_2004,
    u_alpha_2004_parts,
    u_alpha_family,
)


def units(*pairs):
    """Intervals from (offset, length) pairs, as DKPro Agreement's addUnit takes them."""
    return np.array([(a, a + n) for a, n in pairs], dtype=np.int64).reshape(-1, 2)


def test_merge_and_intersect():
    assert merge([5, 0, 3, 10], [8, 4, 6, 12]).tolist() == [[0, 8], [10, 12]]
    assert merge([0, 4], [4, 6]).tolist() == [[0, 4], [4, 6]]  # touching: two units
    a, b = units((0, 10), (20, 5)), units((5, 20))
    assert intersect(a, b).tolist() == [[5, 10], [20, 25]]


# Krippendorff (2004), Content Analysis, 2nd ed., p. 254: a continuum of 300 (150-450), two
# coders, categories c and k. Published with DKPro Agreement's tests (Krippendorff2004Test:
# D_o(c) 0.0144, D_e(c) 0.0532, α(c) 0.7286; α(k) 1).
K2004_C = [units((75, 70), (220, 30)), units((70, 80), (205, 20), (250, 20))]
K2004_K = [units((30, 60), (150, 50)), units((30, 60), (150, 50))]


def test_krippendorff_2004_worked_example():
    d_o, d_e = u_alpha_2004_parts([(300, K2004_C)])
    assert (d_o, d_e) == pytest.approx((0.0144, 0.0532), abs=1e-4)
    assert round(u_alpha_2004([(300, K2004_C)]), 4) == 0.7286
    assert u_alpha_2004([(300, K2004_K)]) == 1.0


def test_dkpro_unitizing_agreement_test():
    # DKPro Agreement UnitizingAgreementTest: continuum 10, r0 -11111111-, r1 --1-1-1---:
    # D_o 0.9100, D_e 0.5351, α -0.7003
    docs = [(10, [units((1, 8)), units((2, 1), (4, 1), (6, 1))])]
    d_o, d_e = u_alpha_2004_parts(docs)
    assert (d_o, d_e) == pytest.approx((0.91, 0.5351), abs=1e-4)  # DKPro: delta 1e-4
    assert round(u_alpha_2004(docs), 4) == -0.7003


# Krippendorff (1995), "On the reliability of unitizing continuous data", p. 57: four pairs of
# coders on a continuum of 24 (DKPro Agreement's Krippendorff1995Test: observed disagreements
# exact; expected and α at a 50,000-fold stretch, within its tolerances 0.005 and 0.02).
K1995 = {
    "A": ([(2, 8), (14, 6)], [(4, 4), (15, 2)], 0.03125, 0.06990, 0.553),
    "B": ([(0, 18)], [(0, 2), (2, 1), (3, 1), (4, 1), (5, 1), (6, 3), (9, 1)], 2.26736, 1.17731,
          -0.926),
    "C": ([(2, 6), (10, 2), (14, 4), (20, 2)], [(0, 2), (4, 4), (10, 4), (16, 2), (20, 2)],
          0.02777, 0.08642, 0.679),
    "D": ([(0, 2), (2, 8), (10, 4), (14, 6), (20, 4)], [(0, 4), (4, 4), (8, 7), (15, 2), (17, 7)],
          0.38715, 0.41445, 0.066),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(K1995))
def test_krippendorff_1995_examples(name):
    r0, r1, d_o, d_e, alpha = K1995[name]
    assert u_alpha_2004_parts([(24, [units(*r0), units(*r1)])])[0] == pytest.approx(d_o, abs=1e-5)
    s = 50_000
    big = [(24 * s, [units(*r0) * s, units(*r1) * s])]
    assert u_alpha_2004_parts(big)[1] == pytest.approx(d_e, abs=0.005)
    assert u_alpha_2004(big) == pytest.approx(alpha, abs=0.02)


def _one_char_units(coding):
    """Per coder, per code: every character coded with the code is its own unit of length 1."""
    return [
        [np.array([(i, i + 1) for i in np.flatnonzero(row == v + 1)]).reshape(-1, 2)
         for v in range(int(coding.max()))]
        for row in coding
    ]  # fmt: skip


def test_2016_family_reduces_to_nominal_alpha_on_single_characters():
    # With every unit one character long, the 2016 coincidences are those of the ordinary α
    # with characters as units (gap = value 0): uα, |uα and cuα equal the krippendorff package
    # (Krippendorff et al. 2016: the family generalises α; this checks eqs. 4 and 10 on it).
    rng = np.random.default_rng(5)
    for m in (2, 3, 5):
        coding = rng.integers(0, 4, size=(m, 40))
        docs = [(40, _one_char_units(coding))]
        fam = u_alpha_family(docs, 3)
        want = krippendorff.alpha(reliability_data=coding, level_of_measurement="nominal")
        assert fam["u_alpha"] == pytest.approx(want, abs=1e-12)
        assert fam["u_alpha_binary"] == pytest.approx(
            krippendorff.alpha(reliability_data=(coding > 0).astype(int),
                               level_of_measurement="nominal"), abs=1e-12)  # fmt: skip
        # cuα pairs coded characters; with three or more coders each character pairs over m − 1
        # (not over the coders who coded it), so compare where every coder coded something
        if m == 2:
            coded = np.where(coding > 0, coding, np.nan)  # a gap is a missing value
        else:
            coded = rng.integers(1, 4, size=(m, 40))
            fam = u_alpha_family([(40, _one_char_units(coded))], 3)
        assert fam["cu_alpha"] == pytest.approx(
            krippendorff.alpha(reliability_data=coded, level_of_measurement="nominal"),
            abs=1e-12,
        )


def test_2016_family_perfect_and_overlapping_codes():
    same = [units((2, 5)), units((9, 3))]
    docs = [(20, [same, same, same])]
    fam = u_alpha_family(docs, 2, domains=[0, 1])
    assert fam["u_alpha"] == fam["u_alpha_binary"] == fam["cu_alpha"] == 1.0
    assert fam["cu_alpha_domains"] == 1.0
    # a coder's two codes overlapping: uα and cuα undefined, |uα on the union still defined
    over = [(20, [[units((2, 5)), units((4, 3))], same])]
    fam = u_alpha_family(over, 2)
    assert np.isnan(fam["u_alpha"]) and np.isnan(fam["cu_alpha"])
    assert 0 < fam["u_alpha_binary"] < 1
    assert binary_u_alpha([(20, [units((2, 5)), units((2, 5))])]) == 1.0


def _sections(units, n):
    """(start, length, coded) of a continuum's units and gaps, by walking it."""
    out, pos = [], 0
    for a, b in units:
        if a > pos:
            out.append((pos, a - pos, False))
        out.append((a, b - a, True))
        pos = b
    if pos < n:
        out.append((pos, n - pos, False))
    return out


def _delta(g, h):
    """Krippendorff (2004, p. 252) δ² of two sections, written case by case."""
    (b1, l1, c1), (b2, l2, c2) = g, h
    if c1 and c2 and -l1 < b1 - b2 < l2:
        return (b1 - b2) ** 2 + (b1 + l1 - b2 - l2) ** 2
    if c1 and not c2 and b2 <= b1 and b1 + l1 <= b2 + l2:
        return l1**2
    if c2 and not c1 and b1 <= b2 and b2 + l2 <= b1 + l1:
        return l2**2
    return 0


def _brute_force(docs):
    m = len(docs[0][1])
    L = sum(n for n, _ in docs)
    obs, units, gaps = 0, [], []
    for n, coders in docs:
        secs = [_sections(u.tolist(), n) for u in coders]
        for i in range(m):
            units += [s[1] for s in secs[i] if s[2]]
            gaps += [s[1] for s in secs[i] if not s[2]]
            for j in range(m):
                if i != j:
                    obs += sum(
                        _delta(g, h)
                        for g in secs[i]
                        for h in secs[j]
                        if g[0] < h[0] + h[1] and h[0] < g[0] + g[1]
                    )
    d_o = obs / (m * (m - 1) * L * L)
    N = len(units)
    num = sum(
        (N - 1) * (2 * lu**3 - 3 * lu**2 + lu) / 3
        + lu**2 * sum(g - lu + 1 for g in gaps if g >= lu)
        for lu in units
    )
    den = m * L * (m * L - 1) - sum(lu * (lu - 1) for lu in units)
    return d_o, 2 / L * num / den


@pytest.mark.parametrize("seed", range(6))
def test_u_alpha_2004_equals_a_case_by_case_computation(seed):
    # random documents, 2-4 coders, touching and nested units: the vectorised sums equal
    # the definition summed section pair by section pair
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 5))
    docs = []
    for _ in range(int(rng.integers(1, 4))):
        n = int(rng.integers(20, 60))
        coders = []
        for _ in range(m):
            cuts = np.sort(rng.choice(np.arange(1, n), size=6, replace=False))
            pairs = cuts.reshape(-1, 2)
            keep = rng.random(len(pairs)) < 0.8
            coders.append(pairs[keep])
        docs.append((n, coders))
    touching = [np.array([[2, 5], [5, 9], [9, 12]])] + [np.array([[3, 9]])] * (m - 1)
    docs.append((30, touching))  # adjacent selections are separate units
    assert u_alpha_2004_parts(docs) == pytest.approx(_brute_force(docs), rel=1e-12)


def test_2016_observed_coincidences_count_characters():
    # o_ck = Σ_characters Σ_{i≠j} [coder i has c][coder j has k] / (m − 1), on random
    # exclusive codings with long units; the expected matrix's total is the number of values
    from themesim.metrics.agreement.unitizing import Coincidences

    rng = np.random.default_rng(11)
    m, n, V = 3, 50, 3
    coders, chars = [], np.zeros((m, n), dtype=int)
    for i in range(m):
        cuts = np.sort(rng.choice(np.arange(1, n), size=8, replace=False)).reshape(-1, 2)
        vals = rng.integers(0, V, size=len(cuts))
        per = [cuts[vals == v] for v in range(V)]
        coders.append(per)
        for (a, b), v in zip(cuts, vals, strict=True):
            chars[i, a:b] = v + 1
    c = Coincidences([(n, coders)], V)
    want = np.zeros((V + 1, V + 1))
    for i in range(m):
        for j in range(m):
            if i != j:
                np.add.at(want, (chars[i], chars[j]), 1 / (m - 1))
    assert np.allclose(c.o, want)
    assert c.expected().sum() == pytest.approx(m * n)
