"""`themesim power`: the study planner answers from the validation suite's own simulation."""

from __future__ import annotations

import json

import pytest

from themesim.cli import main
from themesim.validate.core import rng_for
from themesim.validate.verdicts import AREA, Design, simulate


def test_power_equals_the_suites_simulation_of_the_same_design(capsys):
    args = ["power", "--themes", "8", "--runs", "2", "--analysts", "3", "--agreement", "0.7",
            "--difference", "-0.3", "--draws", "60", "--format", "json"]  # fmt: skip
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    got = {r["verdict"]: r["probability"] for r in out["verdicts"]}
    d = Design(themes=8, runs=2, analysts=3, p_h=0.7, diff=-0.3)
    # three analysts: each simulated study's margin is its analysts' bound, as a study's is
    sim = simulate(d, "strength", 60, rng_for(0, AREA, "strength", d.name()), margin="analysts")
    assert got == {w: sim[f"p_{w}"] for w in got}
    assert out["design"]["margin"] == "analysts"
    assert sum(got.values()) == pytest.approx(1.0)
    assert got["worse"] > 0.5 and got["better"] == 0.0  # 0.3 below the analysts


def test_power_reads_the_margin_as_the_study_would(capsys):
    base = ["power", "--themes", "12", "--runs", "3", "--agreement", "0.7", "--draws", "80",
            "--format", "json"]  # fmt: skip

    def words(*more):
        assert main(base + list(more)) == 0
        return {
            r["verdict"]: r["probability"] for r in json.loads(capsys.readouterr().out)["verdicts"]
        }

    # at no difference a convention of 0.3 makes many studies equivalent; three analysts with
    # a small spread give a bound too small for that
    conv = words("--analysts", "3", "--margin", "0.3", "--margin-from", "convention")
    mine = words("--analysts", "3", "--margin", "0.3")
    assert conv["equivalent"] > 0.5 and mine["equivalent"] < 0.1
    # two analysts: the convention either way
    assert words("--analysts", "2", "--margin", "0.3") == words(
        "--analysts", "2", "--margin", "0.3", "--margin-from", "convention"
    )
    d = Design(themes=12, runs=3, analysts=3, p_h=0.7)
    sim = simulate(d, "strength", 80, rng_for(0, AREA, "strength", d.name()), margin=0.3)
    assert conv == {w: sim[f"p_{w}"] for w in conv}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--margin", "1.5"], "--margin: 1.5 is out of range"),
        (["--analysts", "1"], "--analysts: is 1, the least is 2"),
        (["--analyst-sd", "-1"], "--analyst-sd: -1 is negative"),
        (["--agreement", "0.9", "--difference", "0.2"], "must lie strictly between 0 and 1"),
    ],
)
def test_bad_designs_get_one_line(capsys, args, message):
    assert main(["power", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
