"""Run one workflow step with logging, turning bad input into a one-line error."""

from __future__ import annotations

import fcntl
import hashlib
import logging
import multiprocessing
import os
import sys
import tempfile
from pathlib import Path

from themesim.errors import ThemesimError, disk_full, disk_full_error
from themesim.io.manifest import verify_inputs
from themesim.steps.job import Job

WARNINGS_LOGGER = "py.warnings"  # logging.captureWarnings's; its lines go to the log file only


def _job():
    """The Snakemake job running this script (None outside one): Snakemake's script preamble
    puts its `snakemake` object into the script's (`__main__`) namespace."""
    return getattr(sys.modules.get("__main__"), "snakemake", None)


def _job_inputs() -> list[str]:
    """The input files of the Snakemake job running this script ([] outside one)."""
    return [str(f) for f in getattr(_job(), "input", None) or ()]


def _job_outputs() -> list[str]:
    """The output files of the Snakemake job running this script ([] outside one)."""
    return [str(f) for f in getattr(_job(), "output", None) or ()]


class _LogFile(logging.FileHandler):
    """The job's log file. On a full disk its lines cannot be written; they still reach the
    terminal, so a failed write is not a "--- Logging error ---" traceback there."""

    def handleError(self, record):
        if disk_full(sys.exc_info()[1]) is None:
            super().handleError(record)


def _first_time(said: Path, text: str) -> bool:
    """Whether no process of this job has said `text` yet: the job's forked workers share
    the file `said`, one hash a line, under a lock."""
    line = hashlib.sha256(text.encode("utf-8")).hexdigest() + "\n"
    with open(said, "a+", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        if line in f.readlines():
            return False
        f.write(line)
        return True


class _OncePerJob(logging.Filter):
    """Lets a warning through once across the job's processes (its forked workers share the
    file `said`)."""

    def __init__(self, said: Path):
        super().__init__()
        self.said = said

    def filter(self, record: logging.LogRecord) -> bool:
        return _first_time(self.said, record.getMessage())


def run(log_path, fn, *args, **kwargs) -> None:
    """fn(*args, **kwargs) with its log; first, in a workflow job, the results tables among
    the job's inputs are checked against the sha256 recorded when they were written
    (themesim.io.manifest.verify_inputs): an edited table stops the job with one line.
    Python warnings raised meanwhile go to the log file through logging.captureWarnings,
    each once across the job's processes; the terminal gets one line counting them at the
    job's end."""
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    terminal = logging.StreamHandler(sys.stderr)
    terminal.addFilter(lambda record: record.name != WARNINGS_LOGGER)
    handlers = [_LogFile(log_path, mode="w"), terminal]
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s", handlers=handlers)
    fd, said = tempfile.mkstemp(prefix="themesim-warnings-")
    os.close(fd)
    once = _OncePerJob(Path(said))
    warned = logging.getLogger(WARNINGS_LOGGER)
    warned.addFilter(once)
    logging.captureWarnings(True)
    try:
        inputs = _job_inputs()
        if inputs:
            verify_inputs(inputs)
        fn(*args, **kwargs)
    except ThemesimError as e:
        logging.getLogger("themesim").error("%s", e)
        sys.exit(1)
    except Exception as e:
        full = disk_full(e)  # a full disk, in any step or library: one line too
        if full is None:
            raise
        logging.getLogger("themesim").error("%s", disk_full_error(full, _job_outputs()))
        sys.exit(1)
    finally:
        logging.captureWarnings(False)
        warned.removeFilter(once)
        _count_warnings(Path(said), log_path)
        Path(said).unlink(missing_ok=True)


def run_job(snakemake, step) -> None:
    """A workflow script's one call: `step(job)`, the job as one object (steps.job.Job) from
    Snakemake's `snakemake` object, run with its log (`run`)."""
    run(snakemake.log[0], step, Job.of(snakemake))


def _count_warnings(said: Path, log_path) -> None:
    """One terminal line naming how many Python warnings the job's log holds (the file
    `said` has a line per text said), so a person still sees that there are some."""
    n = len(said.read_text(encoding="utf-8").splitlines())
    if n:
        print(f"WARNING {n} Python warning{'' if n == 1 else 's'} in {log_path}", file=sys.stderr)


def run_all(log_path, tasks, workers: int = 1) -> None:
    """`run` for independent steps (:func:`run_tasks`)."""
    run(log_path, run_tasks, tasks, workers)


def run_tasks(tasks, workers: int = 1) -> None:
    """Independent steps, each (fn, kwargs) or a list of them run in order: with workers > 1,
    that many at once in forked processes (a job's figures share no state, and a job at the
    end of the DAG otherwise leaves its other cores idle)."""
    chains = [t if isinstance(t, list) else [t] for t in tasks]
    if workers <= 1 or len(chains) <= 1:
        for chain in chains:
            _run_chain(chain)
        return
    _pool(chains, workers)


def _run_chain(steps) -> None:
    try:
        for fn, kwargs in steps:
            fn(**kwargs)
    except Exception as e:
        # a forked worker's error reaches `run` pickled, without its chain: a full disk
        # becomes its one line here, where the chain is still known
        full = disk_full(e)
        if full is None:
            raise
        raise disk_full_error(full, _job_outputs()) from None


def _pool(chains, workers: int) -> None:
    # Forked children inherit the imports and the logging set up by `run`; a failure in
    # one is raised here, ThemesimError included, so `run` reports it as one line.
    with multiprocessing.get_context("fork").Pool(min(workers, len(chains))) as pool:
        for result in [pool.apply_async(_run_chain, (c,)) for c in chains]:
            result.get()
