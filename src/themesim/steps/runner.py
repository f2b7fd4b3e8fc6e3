"""Run one workflow step with logging, turning bad input into a one-line error."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from themesim.errors import ThemesimError


def run(log_path, fn, *args, **kwargs) -> None:
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    handlers = [logging.FileHandler(log_path, mode="w"), logging.StreamHandler(sys.stderr)]
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s", handlers=handlers)
    try:
        fn(*args, **kwargs)
    except ThemesimError as e:
        logging.getLogger("themesim").error("%s", e)
        sys.exit(1)


def run_all(log_path, tasks, workers: int = 1) -> None:
    """`run` for independent steps, each (fn, kwargs) or a list of them run in order: with
    workers > 1, that many at once in forked processes (a job's figures share no state, and a
    job at the end of the DAG otherwise leaves its other cores idle)."""
    chains = [t if isinstance(t, list) else [t] for t in tasks]
    if workers <= 1 or len(chains) <= 1:
        run(log_path, lambda: [_run_chain(c) for c in chains])
        return
    run(log_path, _pool, chains, workers)


def _run_chain(steps) -> None:
    for fn, kwargs in steps:
        fn(**kwargs)


def _pool(chains, workers: int) -> None:
    import multiprocessing

    # Forked children inherit the imports and the logging set up by `run`; a failure in
    # one is raised here, ThemesimError included, so `run` reports it as one line.
    with multiprocessing.get_context("fork").Pool(min(workers, len(chains))) as pool:
        for result in [pool.apply_async(_run_chain, (c,)) for c in chains]:
            result.get()
