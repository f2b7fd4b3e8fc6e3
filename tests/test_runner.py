"""steps.runner: independent steps run in forked processes, chains in order, and bad input
raised in a child still ends the job with the one-line error."""

import os
import pickle
import subprocess
import sys
import time

import pytest

from themesim.errors import InputError
from themesim.steps.runner import run_all


def run_job_script(tmp_path, text: str, *args, check=True) -> subprocess.CompletedProcess:
    """`text` run as a script in its own process, as a workflow job runs its script."""
    script = tmp_path / "job.py"
    script.write_text(text)
    return subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        capture_output=True,
        text=True,
        check=check,
    )


def write(path, text, after=None, hold=0.0):
    time.sleep(hold)  # keeps this worker busy, so another worker takes the next chain
    if after is not None:  # a chain's second step sees the first one's file
        text = open(after).read() + text
    with open(path, "w") as f:
        f.write(f"{text} {os.getpid()}")


def fail(where):
    raise InputError(where, "a bad row", "fix the row")


def test_input_error_survives_pickling():
    e = pickle.loads(pickle.dumps(InputError("themes.csv row 3", "no name", "add one")))
    assert isinstance(e, InputError) and str(e) == "themes.csv row 3: no name. add one"
    assert (e.where, e.problem, e.fix) == ("themes.csv row 3", "no name", "add one")


@pytest.mark.parametrize("workers", [1, 2])
def test_steps_run_and_chains_keep_their_order(tmp_path, workers):
    a, b, c = (tmp_path / n for n in "abc")
    tasks = [
        [(write, dict(path=a, text="first", hold=0.5)), (write, dict(path=b, text="+", after=a))],
        (write, dict(path=c, text="alone", hold=0.5)),
    ]
    run_all(tmp_path / "log.txt", tasks, workers=workers)
    assert b.read_text().startswith("first ") and "+" in b.read_text()
    pids = {p.read_text().split()[-1] for p in (a, c)}
    # Forked: the steps ran in other processes than this one (and not both in one).
    assert (
        (str(os.getpid()) not in pids and len(pids) == 2)
        if workers == 2
        else pids == {str(os.getpid())}
    )


def test_bad_input_in_a_forked_step_is_one_line(tmp_path, caplog):
    log = tmp_path / "log.txt"
    with pytest.raises(SystemExit) as exit_:
        run_all(
            log,
            [(fail, dict(where="x.csv row 2")), (write, dict(path=tmp_path / "a", text="ok"))],
            workers=2,
        )
    assert exit_.value.code == 1
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors == ["x.csv row 2: a bad row. fix the row"]


def warn_thrice():
    import warnings

    for _ in range(3):  # one line: Python's own filter says it once
        warnings.warn("DataFrame is highly\nfragmented", RuntimeWarning, stacklevel=1)
    warnings.warn("another text", UserWarning, stacklevel=1)


def test_warnings_are_log_records_each_said_once(tmp_path, caplog):
    """logging.captureWarnings routes them to the py.warnings logger while the step runs,
    and puts the hook back after it."""
    import warnings

    hook = warnings.showwarning
    run_all(tmp_path / "log.txt", [(warn_thrice, {})])
    said = [r.getMessage() for r in caplog.records if r.name == "py.warnings"]
    first = warn_thrice.__code__.co_firstlineno
    assert len(said) == 2
    assert f"test_runner.py:{first + 4}: RuntimeWarning: DataFrame is highly\nfragmented" in said[0]
    assert f"test_runner.py:{first + 5}: UserWarning: another text" in said[1]
    assert {r.levelname for r in caplog.records if r.name == "py.warnings"} == {"WARNING"}
    assert warnings.showwarning is hook


def warn_in_a_worker(path):
    import warnings

    warnings.warn("said by every worker", RuntimeWarning, stacklevel=1)
    write(path, "done", hold=0.3)


def test_forked_workers_say_a_warning_once(tmp_path):
    """report_parts draws its figures in forked workers: a warning each of them raises is
    still one line of the job's log."""
    import logging

    log = tmp_path / "job.log"  # the job's log, which the forked workers write to as well
    handler = logging.FileHandler(log)
    logging.getLogger("py.warnings").addHandler(handler)
    try:
        tasks = [(warn_in_a_worker, dict(path=tmp_path / n)) for n in "abc"]
        run_all(tmp_path / "log.txt", tasks, workers=3)
    finally:
        logging.getLogger("py.warnings").removeHandler(handler)
        handler.close()
    assert all((tmp_path / n).is_file() for n in "abc")
    said = [line for line in log.read_text().splitlines() if ": RuntimeWarning: " in line]
    assert len(said) == 1 and said[0].endswith(": RuntimeWarning: said by every worker")


JOB = """
import sys, warnings
from themesim.steps.runner import run_all

def warn():
    for _ in range(3):
        warnings.warn("a pandas-like warning", RuntimeWarning, stacklevel=1)

run_all(sys.argv[1], [(warn, {}), (warn, {})], workers=int(sys.argv[2]))
"""


@pytest.mark.parametrize("workers", [1, 2])
def test_a_jobs_warnings_are_in_its_log_file_not_on_the_terminal(tmp_path, workers):
    """As a workflow job runs it (its own process, logging not yet set up): the warning is one
    line of the log file; the terminal gets only the count, naming the file."""
    log = tmp_path / "logs" / "job.log"
    done = run_job_script(tmp_path, JOB, log, workers)
    lines = log.read_text().splitlines()
    assert [line for line in lines if ": RuntimeWarning: " in line] == [
        f"WARNING {tmp_path / 'job.py'}:7: RuntimeWarning: a pandas-like warning"
    ]
    assert "pandas-like" not in done.stderr
    assert done.stderr.strip() == f"WARNING 1 Python warning in {log}"


GC_EXIT = """
import sys, types

snakemake = types.SimpleNamespace(input=[])  # a job's process
from themesim.steps.runner import run


class Reader:  # stands for a pyarrow reader with pending work
    def __del__(self):
        with open(sys.argv[2], "w") as f:
            f.write("finalized")


def step():
    r = Reader()
    r.me = r  # in a cycle: garbage when the step returns, finalized only by a collection


run(sys.argv[1], step)
"""


def test_what_a_step_made_is_finalized_before_the_job_exits(tmp_path):
    """Objects a step made, cycles included, are finalized while the interpreter lives: a
    pyarrow reader left unfinalized at exit can abort the job (SIGABRT, apache/arrow#34314),
    as one did in CI when the runner froze the heap at exit."""
    mark = tmp_path / "finalized.txt"
    run_job_script(tmp_path, GC_EXIT, tmp_path / "job.log", mark)
    assert mark.read_text() == "finalized"


FULL_DISK_JOB = """
import errno, logging, os, sys, types

snakemake = types.SimpleNamespace(input=[], output=["results/plots/m/a__vs__b.png"])
from themesim.steps.runner import run_all


class Full:  # the log file's stream on a full disk
    def write(self, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def flush(self):
        pass


def save_png():  # as PIL fails: its own error raised while handling the OSError
    logging.getLogger("themesim").info("drawing a__vs__b")
    try:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    except OSError:
        raise ValueError("image file is truncated")


def write_csv():
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "results/metrics/m/x.csv")


def fill_the_log():
    for h in logging.getLogger().handlers:
        if isinstance(h, logging.FileHandler):
            h.stream = Full()


steps = {"png": save_png, "csv": write_csv}[sys.argv[2]]
run_all(sys.argv[1], [(fill_the_log, {}), (steps, {})] if sys.argv[3] == "1" else
        [[(fill_the_log, {}), (steps, {})], (lambda: None, {})], workers=int(sys.argv[3]))
"""


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize(
    "step, where",
    [("png", "results/plots/m/a__vs__b.png"), ("csv", "results/metrics/m/x.csv")],
)
def test_a_full_disk_in_a_step_is_one_line(tmp_path, step, where, workers):
    """ENOSPC anywhere in a job's step (raised by a library, or inside its own error; in a
    forked worker too), with the log file itself unwritable: one line naming what was
    written and what to do, exit 1, no traceback."""
    done = run_job_script(tmp_path, FULL_DISK_JOB, tmp_path / "job.log", step, workers,
                          check=False)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "Logging error" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
    assert errors == [
        f"ERROR {where}: no space left on the device (No space left on device). Free space on "
        "that disk (`df -h .` shows it) and run again: the results already written are "
        "kept, and nothing half-written is left"
    ], done.stderr


def test_a_full_disk_in_a_command_is_one_line(tmp_path, monkeypatch, capsys):
    import errno

    from themesim import cli, cli_verify

    def full(args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "out.csv")

    monkeypatch.setattr(cli_verify, "cmd_verify", full)  # main looks it up when it runs
    assert cli.main(["verify", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("themesim: error: out.csv: no space left on the device")
    assert len(err.splitlines()) == 1
