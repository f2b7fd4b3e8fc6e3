"""`themesim validate`'s arguments: a repeated --only area, and --out where no folder can be."""

import types

import pandas as pd
import pytest

import themesim.validate as validate
from themesim.cli import main
from themesim.validate.core import Scope, row


@pytest.fixture
def fake_area(monkeypatch):
    """One area, `fake`, of one judged row that holds and one contains-the-estimate row;
    `calls` counts its runs."""
    calls = []

    def run(grid, seed):
        calls.append((grid, seed))
        summary = [row(Scope("fake", "d"), "q", "p", "coverage", 0.95, 1000, nominal=0.95),
                   row(Scope("fake", "d"), "q", "p", "contains_estimate", 1.0, 1000)]  # fmt: skip
        return pd.DataFrame({"x": [1]}), pd.DataFrame(summary)

    area = types.SimpleNamespace(AREA="fake", run=run)
    monkeypatch.setattr(validate, "areas", lambda: {"fake": area})
    return calls


def test_an_area_named_twice_runs_and_counts_once(fake_area, tmp_path, capsys):
    """Regression: `--only equivalence,equivalence` ran the area twice and reported
    "326 of 326" checked properties for 163 distinct ones."""
    out = tmp_path / "v"
    assert main(["validate", "--only", "fake,fake", "--out", str(out)]) == 0
    assert fake_area == [("small", 0)]
    assert capsys.readouterr().out.splitlines()[-1] == (
        "validate: 1 of 1 checked properties hold (coverage and error rates), "
        f"and 1 of 1 contains-the-estimate rows; written to {out}"
    )
    assert len(pd.read_csv(out / "summary_fake.csv")) == 2


@pytest.mark.parametrize("where", ["file", "under_file", "proc", "sys"])
def test_out_where_no_folder_can_be_is_one_line_before_any_work(fake_area, tmp_path, capsys, where):
    """Regression: --out at an existing file, under a file, or under /proc or /sys gave a
    traceback (FileExistsError, NotADirectoryError, ...), at best after the areas had run."""
    (tmp_path / "taken").write_text("x")
    out, problem = {
        "file": (tmp_path / "taken", f"{tmp_path / 'taken'} is a file, not a folder"),
        "under_file": (
            tmp_path / "taken" / "v",
            f"{tmp_path / 'taken' / 'v'} lies under {tmp_path / 'taken'}, which is a file",
        ),
        "proc": ("/proc/themesim-validation", "is under /proc, a kernel file system"),
        "sys": ("/sys/themesim-validation", "is under /sys, a kernel file system"),
    }[where]
    assert main(["validate", "--only", "fake", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"themesim: error: --out {out}: ")
    assert problem in err and "Give a folder that can be created and written" in err
    assert fake_area == []  # refused before the area ran
    assert (tmp_path / "taken").read_text() == "x"
