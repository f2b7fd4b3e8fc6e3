"""Agreement across codebooks (issue 34, part 6): cuα with distance 1 − similarity between codes
(metrics/agreement/codebooks.py), its two limits and hand-computed values, and `themesim agree
--similarity`."""

import io
import math

import numpy as np
import pandas as pd
import pytest
from helpers import one_line_error
from helpers import themesim_cli as themesim
from helpers import write_coding as write

from themesim.io.codings import intervals
from themesim.io.two_codings import read_codings
from themesim.metrics.agreement.agree import agreement_tables
from themesim.metrics.agreement.codebooks import (
    codebook_alpha,
    codebook_alpha_interval,
    similarity_matrix,
)
from themesim.metrics.agreement.unitizing import Coincidences, u_alpha_family


def iv(*pairs):
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


NONE = iv()

# One document of 10 characters, codes x, y, z. A: x on 0-4, y on 4-8; B: x on 0-4, z on 4-8.
# cuα's coincidences (by hand): o[x,x] = 8, o[y,z] = o[z,y] = 4, so D_o = 8; l = (8, 4, 4),
# Σ l*/(l (m − 1)) = (16 + 16 + 16 + 16)/16 = 4, so e = (l lᵀ − diag(32, 16, 16)) / 12 and
# D_e = 160/12. Nominal cuα = 1 − 8 / (160/12) = 0.4; with s(y, z) = v and every other pair
# 0, α_s = 1 − 8 (1 − v) / ((160 − 32 v)/12): 2/3 at v = 0.5, 1 at v = 1.
SHARED_X = [(10, [[iv((0, 4)), iv((4, 8)), NONE], [iv((0, 4)), NONE, iv((4, 8))]])]


def parts(docs, n):
    return [Coincidences([d], n) for d in docs]


def test_identity_similarity_is_cu_alpha_by_hand():
    assert u_alpha_family(SHARED_X, 3)["cu_alpha"] == pytest.approx(0.4)
    assert codebook_alpha(parts(SHARED_X, 3), np.eye(3)) == pytest.approx(0.4)


@pytest.mark.parametrize(("v", "expected"), [(0.0, 0.4), (0.5, 2 / 3), (1.0, 1.0)])
def test_partial_credit_by_hand(v, expected):
    s = similarity_matrix(["x", "y", "z"], [("y", "z", v)])
    assert codebook_alpha(parts(SHARED_X, 3), s) == pytest.approx(expected)


def test_disjoint_codebooks_by_hand():
    # A: a1 on 0-4, a2 on 4-8; B: b1 on 0-8 (one unit). o[a1,b1] = o[a2,b1] = 4 (and mirror),
    # l = (4, 4, 8), Σ l* = 16 + 16 + 64, so e = (l lᵀ − diag(16, 16, 64)) / 10:
    # e[a1,a2] = 1.6, e[a,b1] = 3.2. Σ o δ = 8 (1 − s(a1,b1)) + 8 (1 − s(a2,b1)),
    # Σ e δ = 3.2 (1 − s(a1,a2)) + 6.4 (1 − s(a1,b1)) + 6.4 (1 − s(a2,b1)).
    docs = [(10, [[iv((0, 4)), iv((4, 8)), NONE], [NONE, NONE, iv((0, 8))]])]
    codes = ["a1", "a2", "b1"]
    p = parts(docs, 3)
    # no code resembles another: the plain (nominal) cuα of the union of codes, here 0
    assert codebook_alpha(p, np.eye(3)) == pytest.approx(0.0)
    assert u_alpha_family(docs, 3)["cu_alpha"] == pytest.approx(0.0)
    # b1 is a1: 1 − 8 / 9.6
    s = similarity_matrix(codes, [("a1", "b1", 1.0)])
    assert codebook_alpha(p, s) == pytest.approx(1 - 8 / 9.6)
    # every pair 0.5 (within A too): 1 − 8 / 8
    s = similarity_matrix(codes, [("a1", "b1", 0.5), ("a2", "b1", 0.5), ("a1", "a2", 0.5)])
    assert codebook_alpha(p, s) == pytest.approx(0.0)
    # b1 is a1 and a2 alike: no disagreement left
    s = similarity_matrix(codes, [("a1", "b1", 1.0), ("b1", "a2", 1.0)])
    assert codebook_alpha(p, s) == pytest.approx(1.0)


def test_same_codebooks_reproduce_cu_alpha_and_renaming_keeps_it():
    # random exclusive codings of 3 codes by 2 coders over 4 documents
    rng = np.random.default_rng(3)
    docs = []
    for _ in range(4):
        cuts = np.r_[0, np.cumsum(rng.integers(5, 40, 12))]
        coders = []
        for _ in range(2):
            per = [[] for _ in range(3)]
            for a, b in zip(cuts[:-1], cuts[1:], strict=True):
                k = rng.integers(4)
                if k < 3:
                    per[k].append((a, b))
            coders.append([iv(*p) if p else NONE for p in per])
        docs.append((int(cuts[-1]), coders))
    cu = u_alpha_family(docs, 3)["cu_alpha"]
    assert math.isfinite(cu) and cu != 0
    assert codebook_alpha(parts(docs, 3), np.eye(3)) == pytest.approx(cu, abs=1e-12)
    # B's codebook a renaming of A's (codes 3, 4, 5), each code similar 1 to its twin only:
    # the figure is cuα of the codings before renaming
    renamed = [(n, [a + [NONE] * 3, [NONE] * 3 + b]) for n, (a, b) in docs]
    s = np.eye(6)
    for k in range(3):
        s[k, k + 3] = s[k + 3, k] = 1.0
    assert codebook_alpha(parts(renamed, 6), s) == pytest.approx(cu, abs=1e-12)
    # without the similarity the renamed codings never agree: the plain figure is below 0
    assert codebook_alpha(parts(renamed, 6), np.eye(6)) < 0


def test_interval_is_a_jackknife_over_documents():
    docs = {f"d{k}": Coincidences([SHARED_X[0]], 3) for k in range(3)}
    docs["d3"] = Coincidences([(10, [[iv((0, 8)), NONE, NONE], [iv((0, 8)), NONE, NONE]])], 3)
    s = similarity_matrix(["x", "y", "z"], [("y", "z", 0.5)])
    est, lo, hi = codebook_alpha_interval(docs, s)
    assert est == pytest.approx(codebook_alpha(list(docs.values()), s))
    assert lo < est < hi <= 1
    # three documents alike: no spread, the interval is the estimate. Pooled, l = (24, 12, 12),
    # Σ l* = 192, den = 48 − 192/48 = 44; Σ o δ = 12, Σ e δ = (2·576 + 288·0.5)/44, so
    # α_s = 1 − 12·44/1296 = 16/27 (not 2/3: the expected coincidences' small-sample term)
    three = {k: v for k, v in docs.items() if k != "d3"}
    assert codebook_alpha_interval(three, s) == pytest.approx((16 / 27,) * 3)


def test_similarity_matrix_refuses_what_cannot_be_a_similarity():
    with pytest.raises(ValueError, match="not in \\[0, 1\\]"):
        similarity_matrix(["x", "y"], [("x", "y", 1.5)])
    with pytest.raises(ValueError, match="not a code"):
        similarity_matrix(["x", "y"], [("x", "w", 0.5)])
    with pytest.raises(ValueError, match="given twice"):
        similarity_matrix(["x", "y"], [("x", "y", 0.5), ("y", "x", 0.4)])


# ---------------------------------------------------------------- themesim agree --similarity

TEXT = "abcdefghijklmnopqrst"


def _two_codebooks(tmp_path):
    """Human codes x, y; the LLM codes p, q. Over three transcripts the human's x (0-4) and y
    (4-8) meet the LLM's p (0-4) and q (4-8)."""
    for k in range(3):
        (tmp_path / f"t{k}.txt").write_text(TEXT)
    human = [
        (f"t{k}", c, TEXT[a:b], a, b) for k in range(3) for c, a, b in (("x", 0, 4), ("y", 4, 8))
    ]
    llm = [
        (f"t{k}", c, TEXT[a:b], a, b) for k in range(3) for c, a, b in (("p", 0, 4), ("q", 4, 8))
    ]
    files = [write(tmp_path, "human.csv", human), write(tmp_path, "llm.csv", llm)]
    return files, str(tmp_path / "t*.txt")


def test_agree_tables_report_agreement_across_codebooks(tmp_path):
    files, tx = _two_codebooks(tmp_path)
    c = read_codings(files, [tx], allow_unmatched=True)
    pairs = [("x", "p", 1.0), ("y", "q", 1.0)]
    o = agreement_tables(c, similarity=pairs)["overall"].set_index("scope")
    # the LLM's codebook is the human's renamed: the codings agree perfectly
    assert o.loc["all", "cu_alpha_codebooks"] == pytest.approx(1.0)
    assert o.loc["all", "cu_alpha"] < 0  # as labels they never agree
    assert math.isnan(o.loc["coded", "cu_alpha_codebooks"])
    assert "cu_alpha_codebooks" not in agreement_tables(c)["overall"]


def test_agree_cli_similarity(tmp_path):
    files, tx = _two_codebooks(tmp_path)
    sim = tmp_path / "sim.csv"
    sim.write_text("code_a,code_b,similarity\nx,p,0.9\ny,q,0.8\nx,y,0.1\np,q,0.2\nx,q,0.3\n")
    r = themesim("agree", *files, "--transcripts", tx, "--similarity", sim)
    assert r.returncode == 0, r.stderr
    assert "Agreement across codebooks" in r.stdout
    assert "gives no similarity between two codes of one coder" not in r.stderr
    cross = tmp_path / "cross.csv"
    cross.write_text("code_a,code_b,similarity\nx,p,0.9\ny,q,0.8\n")
    r = themesim("agree", *files, "--transcripts", tx, "--similarity", cross)
    assert r.returncode == 0 and "gives no similarity between two codes of one coder" in r.stderr
    r = themesim("agree", *files, "--transcripts", tx, "--similarity", sim, "--format", "csv")
    t = pd.read_csv(io.StringIO(r.stdout))
    got = t.loc[(t["level"] == "overall") & (t["scope"] == "all"), "cu_alpha_codebooks"]
    c = read_codings(files, [tx], allow_unmatched=True)
    pairs = [("x", "p", 0.9), ("y", "q", 0.8), ("x", "y", 0.1), ("p", "q", 0.2), ("x", "q", 0.3)]
    s = similarity_matrix(c.codes, pairs)
    per = intervals(c)
    want = codebook_alpha([Coincidences([(len(TEXT), per[d])], len(c.codes)) for d in per], s)
    assert float(got.iloc[0]) == pytest.approx(want)
    assert 0 < want < 1


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        ("a,b,c\nx,p,0.5\n", "no column"),
        ("code_a,code_b,similarity\nx,p,high\n", "no numeric similarity"),
        ("code_a,code_b,similarity\nu,v,0.5\n", "names none of the codes"),
        ("code_a,code_b,similarity\nx,p,1.2\n", "not in [0, 1]"),
    ],
)
def test_agree_cli_similarity_errors(tmp_path, content, pattern):
    files, tx = _two_codebooks(tmp_path)
    sim = tmp_path / "sim.csv"
    sim.write_text(content)
    one_line_error(themesim("agree", *files, "--transcripts", tx, "--similarity", sim), pattern)


# ---------------------------------------------------------------- the study: grounding.csv
