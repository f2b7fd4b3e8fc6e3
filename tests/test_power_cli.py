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
    # the margin fixed before the data, on the primary route (matched), as a study reads it
    sim = simulate(d, "matched", 60, rng_for(0, AREA, "matched", d.name()), margin=0.1)
    assert got == {w: sim[f"p_{w}"] for w in got}
    assert out["design"]["margin"] == 0.1
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

    # at no difference a margin of 0.3 makes many studies equivalent; against the analysts'
    # own spread (the opt-in test, three analysts with a small spread) few are
    conv = words("--analysts", "3", "--margin", "0.3")
    spread = words("--analysts", "3", "--margin", "0.3", "--margin-from", "analysts")
    assert conv["equivalent"] > 0.5 and spread["equivalent"] < 0.1
    # two analysts: the fixed margin either way
    assert words("--analysts", "2", "--margin", "0.3") == words(
        "--analysts", "2", "--margin", "0.3", "--margin-from", "analysts"
    )
    d = Design(themes=12, runs=3, analysts=3, p_h=0.7)
    sim = simulate(d, "matched", 80, rng_for(0, AREA, "matched", d.name()), margin=0.3)
    assert conv == {w: sim[f"p_{w}"] for w in conv}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--margin", "1.5"], "--margin: 1.5 is out of range"),
        (["--analysts", "1"], "--analysts: is 1, the least is 2"),
        (["--analyst-sd", "-1"], "--analyst-sd: -1 is negative"),
        (["--agreement", "0.9", "--difference", "0.2"], "must lie strictly between 0 and 1"),
        (["--domains", "0"], "--domains: is 0, the least is 1"),
        (["--themes", "4", "--domains", "5"], "--domains 5: is more than the 4 themes"),
        (["--analyst-sd", "nan"], "--analyst-sd: nan is not a number"),
        (["--analyst-sd", "inf"], "--analyst-sd: inf is not a number"),
        (["--agreement", "nan"], "--agreement: nan must lie strictly between 0 and 1"),
        (["--difference", "nan"], "--difference: nan puts the generator's agreement at nan"),
    ],
)
def test_bad_designs_get_one_line(capsys, args, message):
    assert main(["power", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_the_generators_set_size_and_the_smallest_design(capsys):
    # a generator writing 16 themes against analysts of 10: planned at that size (the
    # agreement of the analysts' size design must stay reachable: 0.5 x 16 / 10 < 1)
    args = ["power", "--themes", "10", "--gen-themes", "16", "--agreement", "0.5",
            "--draws", "40", "--format", "json"]  # fmt: skip
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["design"]["gen_themes"] == 16
    # the smallest design is named, and it is a design where a generator as good as the
    # analysts reaches equivalent, non-inferior or better in 80 % of studies
    assert main(["power", "--themes", "12", "--agreement", "0.7", "--draws", "40",
                 "--margin", "0.3", "--smallest"]) == 0  # fmt: skip
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("smallest design: ")
    from themesim.validate.verdicts import reach

    n = int(line.split()[2])
    assert 12 <= n and reach(Design(themes=n, runs=3, analysts=3, p_h=0.7), "matched", 40, 0,
                             margin=0.3) >= 0.8  # fmt: skip


def _power_in_a_box(*args):
    """`themesim power ARGS` in a process held to 3 GiB of address space and 60 s: a size
    that is not checked first ends in MemoryError or the timeout instead of taking the
    machine (as --analysts 10000 --draws 20 took 21 GB)."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    return subprocess.run(
        [sys.executable, "-m", "themesim.cli", "power", *args],
        capture_output=True, text=True, timeout=60, preexec_fn=limit,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--analysts", "10000", "--draws", "20"], "simulating 20 studies needs about"),
        (["--draws", "100000000"], "simulating 100,000,000 studies takes about"),
        (["--runs", "100000"], "simulating 400 studies needs about"),
        (["--themes", "100000000", "--draws", "10"], "simulating 10 studies needs about"),
    ],
)
def test_a_size_is_checked_against_memory_and_time_before_it_starts(args, message):
    proc = _power_in_a_box(*args)
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and message in line, line
    assert "of memory" in line or "raise --max-minutes" in line


def test_max_minutes_moves_the_time_limit(capsys):
    # 200 studies of the default design: about 1.3 s by the model, over 0.01 minutes
    assert main(["power", "--draws", "200", "--max-minutes", "0.01"]) == 2
    line = capsys.readouterr().err.strip()
    assert "simulating 200 studies takes about 1 s of CPU time" in line
    assert "more than --max-minutes 0.01" in line
    assert main(["power", "--draws", "200"]) == 0
