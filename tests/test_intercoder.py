"""Intercoder statistics (metrics/agreement/intercoder.py) and `themesim agree` on hand-computed
codings."""

import json
import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from helpers import QDPX_TWO_CODERS as TWO_CODERS
from helpers import make_qdpx
from helpers import themesim_cli as themesim
from sklearn.metrics import cohen_kappa_score

from themesim.errors import InputError
from themesim.io.two_codings import read_two_codings
from themesim.metrics.agreement.agree import agreement_tables
from themesim.metrics.agreement.intercoder import (
    alpha_counts,
    code_table,
    jackknife_interval,
    kappa_counts,
    overall_table,
    unit_counts,
)

# 20 characters. Coder A: X on 0-10, Y on 12-16; coder B: X on 5-15, Y on 12-16.
TEXT = "abcdefghijklmnopqrst"


def _coding(spans, n=20):
    M = np.zeros((n, 2), dtype=bool)
    for j, a, b in spans:
        M[a:b, j] = True
    return M


A = _coding([(0, 0, 10), (1, 12, 16)])
B = _coding([(0, 5, 15), (1, 12, 16)])


def test_counts_formulas_equal_the_libraries():
    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b = rng.random(40) < rng.random(), rng.random(40) < rng.random()
        cells = [(a & b).sum(), (a & ~b).sum(), (~a & b).sum(), (~a & ~b).sum()]
        if len({*a.tolist(), *b.tolist()}) < 2:
            continue
        data = np.vstack([a, b]).astype(float)
        assert alpha_counts(*cells) == pytest.approx(
            krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-12
        )
        if len(set(a.tolist())) > 1 or len(set(b.tolist())) > 1:
            assert kappa_counts(*cells) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    # undefined: both codings constant and equal
    assert math.isnan(kappa_counts(0, 0, 0, 7)) and math.isnan(alpha_counts(0, 0, 0, 7))


def test_hand_computed_character_agreement():
    counts = unit_counts(A, B, ["t1"] * 20, ["X", "Y"])
    t = code_table(counts).set_index(["scope", "code", "group"])
    x = t.loc[("all", "X", "t1")]
    # both 5 (5-9), only A 5, only B 5, neither 5
    assert (x["both"], x["coded_a"], x["coded_b"], x["units"]) == (5, 10, 10, 20)
    assert x["percent_agreement"] == pytest.approx(50.0)
    assert x["kappa"] == pytest.approx(0.0, abs=1e-12)  # p_o = p_e = 0.5
    assert x["alpha"] == pytest.approx(1 - 39 * 10 / (20 * 20))  # 0.025
    y = t.loc[("all", "Y", "t1")]
    assert (y["percent_agreement"], y["kappa"], y["alpha"]) == (100.0, 1.0, 1.0)
    # without uncoded text: the 16 characters 0-15 some coder coded; X leaves one (15) uncoded
    xc = t.loc[("coded", "X", "t1")]
    assert xc["units"] == 16
    assert xc["percent_agreement"] == pytest.approx(100 * 6 / 16)
    assert xc["kappa"] == pytest.approx(-1 / 3)
    assert xc["alpha"] == pytest.approx(1 - 31 * 10 / (12 * 20))  # -7/24
    # pooled over the two codes: both 9, only A 5, only B 5, neither 21
    o = overall_table(counts).set_index("scope").loc["all"]
    assert o["percent_agreement"] == pytest.approx(75.0)
    assert o["pooled_kappa"] == pytest.approx((0.75 - 0.545) / (1 - 0.545))
    assert o["median_kappa"] == pytest.approx(0.5)  # median of 0 and 1
    assert math.isnan(o["pooled_kappa_ci_low"])  # one transcript: no interval


def test_jackknife_interval_by_hand():
    # θ = 0.5, leave-one-out 0.4, 0.5, 0.6: SE² = 2/3 × 0.02, t(0.975, 2) = 4.302653
    lo, hi = jackknife_interval(0.5, [0.4, 0.5, 0.6])
    se = math.sqrt(2 / 3 * 0.02)
    assert (lo, hi) == pytest.approx((0.5 - 4.302653 * se, 0.5 + 4.302653 * se), abs=1e-6)
    assert all(math.isnan(v) for v in jackknife_interval(0.5, [0.4, 0.6]))


def test_pooled_rows_sum_the_transcripts():
    rng = np.random.default_rng(0)
    A2, B2 = rng.random((60, 3)) < 0.3, rng.random((60, 3)) < 0.3
    groups = ["a"] * 20 + ["b"] * 25 + ["c"] * 15
    t = code_table(unit_counts(A2, B2, groups, ["p", "q", "r"]))
    pooled = t[(t["scope"] == "all") & (t["group"] == "(all)")].set_index("code")
    for j, code in enumerate("pqr"):
        assert pooled.loc[code, "kappa"] == pytest.approx(cohen_kappa_score(A2[:, j], B2[:, j]))


# ------------------------------------------------------------------ themesim agree


def _files(tmp_path, b_rows=None):
    (tmp_path / "tx").mkdir()
    (tmp_path / "tx" / "t1.txt").write_text(TEXT)
    a = pd.DataFrame(
        [
            ("t1", "X", TEXT[0:10], 0, 10),
            ("t1", "Y", TEXT[12:16], 12, 16),
        ],
        columns=["document", "code", "text", "start", "end"],
    )
    b = pd.DataFrame(
        b_rows
        or [
            ("t1", "x", TEXT[5:15], 5, 15),  # code names match in any case
            ("t1", "Y", TEXT[12:16], "", ""),  # located by its text
        ],
        columns=["document", "code", "text", "start", "end"],
    )
    a.to_csv(tmp_path / "anna.csv", index=False)
    b.to_csv(tmp_path / "ben.csv", index=False)
    return tmp_path / "anna.csv", tmp_path / "ben.csv", str(tmp_path / "tx" / "*.txt")


def test_agree_two_csv_files_hand_computed(tmp_path):
    a, b, tx = _files(tmp_path)
    proc = themesim("agree", a, b, "--transcripts", tx, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["coders"] == ["anna", "ben"]
    rows = {(r["scope"], r["code"], r["transcript"]): r for r in out["codes by transcript"]}
    assert rows[("all", "X", "t1")]["kappa"] == pytest.approx(0.0, abs=1e-12)
    assert rows[("coded", "X", "t1")]["kappa"] == pytest.approx(-1 / 3)
    assert rows[("all", "Y", "(all)")]["alpha_binary_char"] == 1.0
    assert rows[("all", "Y", "(all)")]["u_alpha_2004"] == 1.0
    text = themesim("agree", a, b, "--transcripts", tx).stdout
    assert "percent agreement 75.0 %" in text
    csv = themesim("agree", a, b, "--transcripts", tx, "--format", "csv").stdout.splitlines()
    assert csv[0].startswith("level,scope,code,transcript,")
    assert sum(line.startswith("overall,") for line in csv) == 2


def test_agree_writes_one_sheet_per_table(tmp_path):
    from openpyxl import load_workbook

    a, b, tx = _files(tmp_path)
    out = tmp_path / "agree.xlsx"
    proc = themesim("agree", a, b, "--transcripts", tx, "--format", "xlsx", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert load_workbook(out).sheetnames == ["sheets", "codes by transcript", "overall"]


@pytest.mark.parametrize(
    "b_rows, message",
    [
        (
            [
                ("t1", "X", TEXT[5:15], 5, 15),
                ("t1", "Y", TEXT[12:16], 12, 16),
                ("t1", "Z", TEXT[0:2], 0, 2),
            ],
            r"ben.csv, row 4: code 'Z' is used by ben only",
        ),
        (
            [("t1", "X", "tuv", 18, 23), ("t1", "Y", TEXT[12:16], 12, 16)],
            r"ben.csv, row 2: offsets 18-23 lie outside transcript 't1'",
        ),
        (
            [("t1", "X", TEXT[5:15], 5, 15), ("t1", "Y", TEXT[12:16], 12, 17)],
            r"ben.csv, row 3: offsets 12-17 select 'mnopq' in 't1', not the text 'mnop'",
        ),
    ],
)
def test_agree_bad_input_one_line(tmp_path, b_rows, message):
    a, b, tx = _files(tmp_path, b_rows)
    with pytest.raises(InputError, match=message):
        read_two_codings([a, b], [tx])
    proc = themesim("agree", a, b, "--transcripts", tx)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_agree_unmatched_code_when_allowed(tmp_path):
    a, b, tx = _files(tmp_path, [("t1", "X", TEXT[5:15], 5, 15)])
    c = read_two_codings([a, b], [tx], allow_unmatched=True)
    t = agreement_tables(c)["codes by transcript"].set_index(["scope", "code", "transcript"])
    assert t.loc[("all", "Y", "t1"), "coded_b"] == 0
    assert t.loc[("all", "Y", "t1"), "kappa"] == 0.0  # A coded 4 characters, B none


def test_agree_qdpx_with_two_coders(tmp_path):
    p = make_qdpx(tmp_path, TWO_CODERS.format(text=TEXT), entries={})
    proc = themesim("agree", p, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["coders"] == ["Anna", "Ben"]
    rows = {(r["scope"], r["code"], r["transcript"]): r for r in out["codes by transcript"]}
    # t1 as the hand-computed CSV case; t2 agrees perfectly on X (0-5 of 10)
    assert rows[("all", "X", "t1")]["kappa"] == pytest.approx(0.0, abs=1e-12)
    assert rows[("all", "X", "t2")]["kappa"] == 1.0
    # X pooled over both: both 10, only A 5, only B 5, neither 10 (of 30)
    pooled = rows[("all", "X", "(all)")]
    assert pooled["percent_agreement"] == pytest.approx(100 * 20 / 30)
    p_a = 15 / 30
    assert pooled["kappa"] == pytest.approx((20 / 30 - (p_a * p_a + (1 - p_a) ** 2)) / 0.5)
    # Y is never applied in t2 by either coder: κ undefined there, not 1
    assert rows[("all", "Y", "t2")]["kappa"] is None


def test_agree_qdpx_needs_two_coders(tmp_path):
    xml = TWO_CODERS.format(text=TEXT).replace(
        '<Coding guid="k3" creatingUser="u-b">', '<Coding guid="k3" creatingUser="u-c">'
    )
    p = make_qdpx(tmp_path, xml, entries={})
    # three coders are compared; u-c never used Y
    with pytest.raises(InputError, match=r"PlainTextSelection 2: code 'Y' is used by Anna and Ben"
                       r" only, not by u-c"):  # fmt: skip
        read_two_codings([p])
    assert read_two_codings([p], allow_unmatched=True).coders == ("Anna", "u-c", "Ben")
    c = read_two_codings([p], coders=["Anna", "Ben"], allow_unmatched=True)
    assert c.coders == ("Anna", "Ben")
