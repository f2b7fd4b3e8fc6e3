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
