"""Every size a `themesim` command is given is checked against the memory and CPU time it
implies before the work starts (themesim.cli_sizes): refused in one line with the estimate,
never a machine taken or an hour gone first. The power planner's: tests/test_power_cli.py."""

import resource
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from helpers import one_line_error

from themesim.cli import main


def boxed(*args, cwd=None):
    """`themesim ARGS` in a process held to 3 GiB of address space and 60 s: a size that is
    not checked first ends in MemoryError or the timeout."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    return subprocess.run(
        [sys.executable, "-m", "themesim.cli", *map(str, args)],
        capture_output=True, text=True, timeout=60, preexec_fn=limit, cwd=cwd,
    )  # fmt: skip


def matrix_csv(path, n_a, n_b, seed=0):
    S = np.random.default_rng(seed).random((n_a, n_b)) * 0.8
    frame = pd.DataFrame(S, index=[f"a{i}" for i in range(n_a)],
                         columns=[f"b{j}" for j in range(n_b)])  # fmt: skip
    frame.to_csv(path, float_format="%.3f")
    return path


def test_score_with_families_of_a_large_matrix_is_refused_with_its_estimate(tmp_path):
    # 2,000 x 2,000 with --families: about 20 minutes of CPU by the model (an hour and more
    # before, with nothing said)
    m = matrix_csv(tmp_path / "m.csv", 2000, 2000)
    proc = boxed("score", m, "--threshold", "0.5", "--families")
    line = one_line_error(proc, "scoring it takes about 20 minutes of CPU time")
    assert (
        "(2,000 x 2,000 themes, 1 threshold(s) with --families), more than --max-minutes 10" in line
    )
    assert "raise --max-minutes to run it" in line


def test_score_reading_is_checked_against_free_memory(tmp_path, monkeypatch, capsys):
    m = matrix_csv(tmp_path / "m.csv", 50, 40)
    monkeypatch.setattr("themesim.cli_sizes.available_bytes", lambda: 100 << 20)
    assert main(["score", str(m), "--threshold", "0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "reading the matrices needs about 160.2 MiB of memory" in err
    assert "and 100.0 MiB is available" in err and len(err.splitlines()) == 1
    monkeypatch.setenv("THEMESIM_MEMORY_CHECK", "off")  # as for the workflow's matrices
    assert main(["score", str(m), "--threshold", "0.5", "--format", "csv"]) == 0


def test_compare_of_huge_theme_files_is_refused_before_embedding(tmp_path):
    rows = "".join(f"Theme {i},words {i % 97} and {i % 89}\n" for i in range(40_000))
    for name in ("a.csv", "b.csv"):
        (tmp_path / name).write_text("name,description\n" + rows)
    proc = boxed("compare", "a.csv", "b.csv", "--method", "tfidf", cwd=tmp_path)
    line = one_line_error(proc, "a.csv vs b.csv: comparing them needs about")
    assert "(40,000 x 40,000 themes, method tfidf)" in line and "Compare smaller" in line


def test_agree_of_many_coders_is_refused_with_its_estimate(tmp_path):
    text = "".join(chr(97 + i % 26) for i in range(400))
    rng = np.random.default_rng(0)
    rows = []
    for k in range(200):
        for code in range(5):
            a = int(rng.integers(0, 300))
            for doc in ("t0", "t1", "t2", "t3"):
                rows.append((f"c{k}", doc, f"code{code}", text[a : a + 50], a, a + 50))
    cols = ["coder", "document", "code", "text", "start", "end"]
    pd.DataFrame(rows, columns=cols).to_csv(tmp_path / "all.csv", index=False)
    for doc in ("t0", "t1", "t2", "t3"):
        (tmp_path / f"{doc}.txt").write_text(text)
    proc = boxed("agree", "all.csv", "--transcripts", "t*.txt", cwd=tmp_path)
    line = one_line_error(proc, "200 coders, 5 codes, 4 transcripts: computing their agreement")
    assert "takes about 12 minutes of CPU time (19,900 pairs of coders" in line
    assert "Compare fewer coders at once (--coders A,B,C)" in line
    assert proc.stdout == ""


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_max_minutes_must_be_positive(tmp_path, capsys, value):
    m = matrix_csv(tmp_path / "m.csv", 5, 4)
    assert main(["score", str(m), "--threshold", "0.5", "--max-minutes", value]) == 2
    assert "--max-minutes: " in capsys.readouterr().err
