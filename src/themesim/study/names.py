"""What a set, method or comparison may be called, and whether every file name a study
writes from its names fits the file system."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from themesim.archive.build import archive_name
from themesim.errors import InputError
from themesim.io.files import written_names
from themesim.kinds import get as get_kind
from themesim.paths import PAIR_SEP, pair_name

if TYPE_CHECKING:
    from themesim.study import Study

SET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]*")  # fullmatch: "$" passes a final "\n"
METHOD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")
# The file names a study writes from its names ("{}" = a set, a comparison's pair name
# "a__vs__b", a method), with whether the file keeps its sha256 beside it (io.files'
# checksum): every one also gets a temporary name while it is written (io.files.atomic_path).
SET_FILES = (("{}.parquet", True), ("{}.quotes.csv", True))  # themes, vectors, labels, quotes
PAIR_FILES = (("{}.parquet", False), ("{}_heatmap.png", False))  # similarity, plans, heatmap
WITHIN_FILES = (("{}.parquet", False),)  # a set against itself: its within-set similarities
GROUNDED_PAIR_FILES = (("{}.parquet", True), ("{}_iou.png", False))  # grounding's per pair
METHOD_FILES = (("{}.parquet", True), ("{}.csv", True))  # ceiling, calibration


def _name_max() -> int:
    """The longest file name the run folder's file system takes (255 on most)."""
    try:
        return int(os.pathconf(".", "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255


def _short(name: str, keep: int = 24) -> str:
    return name if len(name) <= 2 * keep + 1 else f"{name[:keep]}…{name[-keep:]}"


def _longest(name: str, templates) -> str:
    return max(
        (n for t, checksum in templates for n in written_names(t.format(name), checksum)),
        key=len,
    )


def _set_key(config: dict, name: str) -> str:
    for i, entry in enumerate(config.get("theme_sets") or []):
        path = entry if isinstance(entry, str) else entry["path"]
        given = None if isinstance(entry, str) else entry.get("name")
        if (given or Path(path).stem) == name:
            return f"config theme_sets[{i}] ({path})"
    return f"config generate_themes (run {name})"


def check_name_lengths(config: dict, study: Study) -> None:
    """Every file name the study will write, temporary files and sha256 files included, fits
    the file system: a name too long failed a job after the work before it (the similarity
    job's temporary file of two 118-character set names; the archive of a 294-character
    study name)."""
    limit = _name_max()
    grounded = bool(study.grounding.get("active", True) and study.transcripts)

    def too_long(longest: str, final: str, where: str, what: str, fix: str) -> None:
        if len(longest) > limit:
            how = "" if longest == final else ", a temporary or sha256 file beside a result"
            raise InputError(
                where,
                f"{what} the file name {_short(longest)!r} ({len(longest)} characters{how}), "
                f"longer than the {limit} this file system takes",
                fix,
            )

    for s in study.sets:
        longest = _longest(s, SET_FILES)
        over = len(longest) - len(s)
        too_long(
            longest,
            s,
            _set_key(config, s),
            f"set name {_short(s)!r} ({len(s)} characters) gives",
            f"Shorten the set name (name: in theme_sets) to at most {limit - over} characters",
        )
    within = any(get_kind(spec["kind"]).within_set_matrices for spec in study.methods.values())
    for a, b in dict.fromkeys(study.pairs + (study.within if within else [])):
        p = pair_name(a, b)
        templates = (
            WITHIN_FILES if a == b else PAIR_FILES + (GROUNDED_PAIR_FILES if grounded else ())
        )
        longest = _longest(p, templates)
        most = limit - (len(longest) - len(p)) - len(PAIR_SEP)
        what = (
            f"set name {_short(a)!r} ({len(a)} characters), compared with itself, gives"
            if a == b
            else f"set names {_short(a)!r} ({len(a)} characters) and {_short(b)!r} "
            f"({len(b)} characters), compared, give"
        )
        fix = (
            f"Shorten the set name (name: in theme_sets) to at most {most // 2} characters"
            if a == b
            else f"Shorten the set names (name: in theme_sets): the two names of a comparison "
            f"may have at most {most} characters together"
        )
        too_long(longest, p, _set_key(config, max((b, a), key=len)), what, fix)
    for m in study.methods:
        longest = _longest(m, METHOD_FILES)
        over = len(longest) - len(m)
        too_long(
            longest,
            m,
            f"config methods.{_short(m)}",
            f"the method name ({len(m)} characters) gives",
            f"Shorten the method name to at most {limit - over} characters",
        )

    zip_name = f"{archive_name(study.name)}.zip"  # results/archive/<name>.zip, written as .part
    over = len(zip_name) + len(".part") - len(archive_name(study.name))
    too_long(
        f"{zip_name}.part",
        zip_name,
        "config study.name",
        f"the study name ({len(study.name)} characters), as the archive's name, gives",
        f"Shorten study.name to at most {limit - over} characters (the archive is "
        "results/archive/<study.name>.zip)",
    )
