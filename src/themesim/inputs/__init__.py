"""What each rule of the workflow reads and writes, per stage and method.

One module per stage; its functions take the Setup (the study, themesim.study.Study, and
the workflow's config) and build file lists from the patterns of themesim.paths and what
each method's kind does (themesim.kinds). Nothing here imports Snakemake: the rules wrap
these paths in `ancient()`/`report()` where they need to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from themesim.study import Study
from themesim.study.names import pair_name

NOTHING = "(?!x)x"  # a wildcard pattern that matches no method


@dataclass(frozen=True)
class Setup:
    """What every input function reads: the study, the config its settings come from, and
    the workflow that runs it."""

    study: Study
    config: dict
    code_version: str = ""  # the workflow's git commit, which the report and archive record
    basedir: str = "."  # the workflow's folder (the Snakefile's): its files the archive packs


@dataclass(frozen=True)
class Report:
    """A path `snakemake --report` shows (caption: a file name in workflow/report/)."""

    path: str
    caption: str
    category: str
    subcategory: str | None = None


def pair_names(pairs) -> list[str]:
    return [pair_name(a, b) for a, b in pairs]


def regex_of(methods) -> str:
    return "|".join(re.escape(m) for m in methods) or NOTHING


def svg_of(png_files) -> list[str]:
    return [re.sub(r"\.png$", ".svg", f) for f in png_files]


def at(pattern: str, **names) -> str:
    return pattern.format(**names)
