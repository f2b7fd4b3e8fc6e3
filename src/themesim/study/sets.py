"""The theme sets of a config: their files, the transcripts, each set's coded segments and
.qdpx user, and the runs generate_themes adds."""

from __future__ import annotations

import glob
import hashlib
from pathlib import Path

from themesim.defaults import section_defaults
from themesim.errors import InputError
from themesim.io.refi_qda import check_study_users
from themesim.study.names import PAIR_SEP, SET_NAME

GENERATED_DIR = "results/generated"
# Keys of generate_themes that reach themesim.llm.generate.GenerateSettings.
GENERATE_KEYS = (
    "base_url",
    "model",
    "api_key_env",
    "prompt",
    "max_themes",
    "chunk_themes",
    "temperature",
    "max_tokens",
    "n_ctx",
    "chars_per_token",
    "max_retries",
    "timeout_s",
)


def _resolved(path) -> str | None:
    return str(Path(path).resolve()) if path else None


def set_entries(config: dict) -> dict[str, str]:
    sets: dict[str, str] = {}
    seen: dict[tuple, tuple[int, str]] = {}  # what makes a set -> its entry and name
    for i, entry in enumerate(config.get("theme_sets") or []):
        if isinstance(entry, str):
            entry = {"path": entry}
        path = entry["path"]
        name = entry.get("name") or Path(path).stem
        where = f"config theme_sets[{i}] ({path})"
        if not SET_NAME.fullmatch(name) or PAIR_SEP in name:
            raise InputError(
                where,
                f"set name {name!r} is not usable in file names",
                "Use letters, digits, '_', '.', '-', '@' (no '__vs__'): "
                "rename the file or set name:",
            )
        if name in sets:
            raise InputError(
                where, f"set name {name!r} is used twice", "Give one of them a different name:"
            )
        if not Path(path).is_file():
            raise InputError(where, "file not found", "Check the path (relative to the run folder)")
        # one file is two sets only as two users' codings of a .qdpx, two coders' coded
        # segments of one code book, or two levels of a project's codes
        key = (
            _resolved(path),
            _resolved(entry.get("segments")),
            str(entry.get("user") or "").strip(),
            entry.get("level") or "all",
        )
        if key in seen:
            j, other = seen[key]
            raise InputError(
                where,
                f"is the same file as theme_sets[{j}] (set {other!r}) with the same segments, "
                "user and level: the two sets would be one set compared with itself, an "
                "agreement of 1 that says nothing",
                "List the file once (a file is listed twice to compare its .qdpx users with "
                "user:, or two coders' coded segments of one code book with segments:)",
            )
        seen[key] = (i, name)
        sets[name] = path
    return sets


def identical_files(sets: dict[str, str]) -> list[str]:
    """One line per group of sets whose theme files are different files with the very same
    bytes (a copy given as another analyst's or run's): their agreement says nothing about
    two analysts. Files of different sizes are never read."""
    by_size: dict[tuple[int, str], list[str]] = {}
    for name, path in sets.items():
        p = Path(path)
        if p.is_file():
            by_size.setdefault((p.stat().st_size, p.suffix.lower()), []).append(name)
    notes = []
    for names in by_size.values():
        paths = {_resolved(sets[n]) for n in names}
        if len(names) < 2 or len(paths) < 2:
            continue
        digests: dict[str, list[str]] = {}
        for n in names:
            digest = hashlib.sha256(Path(sets[n]).read_bytes()).hexdigest()
            digests.setdefault(digest, []).append(n)
        for same in digests.values():
            if len({_resolved(sets[n]) for n in same}) > 1:
                listed = " and ".join(f"{n!r} ({sets[n]})" for n in same)
                notes.append(
                    f"theme sets {listed} are files with the very same content: if one is a "
                    "copy of the other, their agreement of 1 says nothing about two analysts"
                )
    return notes


def set_segments(config: dict, sets: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(set -> coded-segments file, .qdpx set -> level) of the theme_sets entries."""
    segments, levels = {}, {}
    by_path = {v: k for k, v in sets.items()}
    for i, entry in enumerate(config.get("theme_sets") or []):
        entry = {"path": entry} if isinstance(entry, str) else entry
        name = by_path.get(entry["path"]) if not entry.get("name") else entry["name"]
        if Path(entry["path"]).suffix.lower() == ".qdpx":
            segments[name] = entry["path"]
            levels[name] = entry.get("level") or "all"
        if entry.get("segments"):
            if not Path(entry["segments"]).is_file():
                raise InputError(
                    f"config theme_sets[{i}].segments ({entry['segments']})",
                    "file not found",
                    "Check the path of the coded-segments file (relative to the run folder)",
                )
            segments[name] = entry["segments"]
    return segments, levels


def set_users(config: dict, sets: dict[str, str], segments: dict[str, str]) -> dict[str, str]:
    """.qdpx set -> the user whose codings are its coded segments (`user:`). A .qdpx set whose
    codings come from two or more users and that names none is refused: merged, they would
    pass for one coder's (issue 34)."""
    users = {}
    by_path = {v: k for k, v in sets.items()}
    for i, entry in enumerate(config.get("theme_sets") or []):
        entry = {"path": entry} if isinstance(entry, str) else entry
        name = by_path.get(entry["path"]) if not entry.get("name") else entry["name"]
        user = entry.get("user")
        where = f"config theme_sets[{i}] ({entry['path']})"
        user_where = f"config theme_sets[{i}].user ({entry['path']})"
        qdpx = Path(entry["path"]).suffix.lower() == ".qdpx"
        if user is not None and (not qdpx or segments.get(name) != entry["path"]):
            raise InputError(
                user_where,
                f"user: picks a .qdpx project's codings, and set {name!r} takes its coded "
                f"segments from {segments.get(name) or 'no .qdpx'}",
                "Remove user:, or give the .qdpx as path: without segments:",
            )
        if qdpx and segments.get(name) == entry["path"]:
            # here only: the XML and parquet readers would slow every study's start
            check_study_users(entry["path"], user, name, where, user_where)
            if user is not None:
                users[name] = str(user)
    return users


def generated_runs(config: dict, sets: dict[str, str], transcripts: list[str]):
    """(run -> seed, settings) of generate_themes; ({}, {}) unless it is active."""
    gen = section_defaults("generate_themes") | (config.get("generate_themes") or {})
    if not gen["active"]:
        return {}, {}
    where = "config generate_themes"
    runs = int(gen["runs"])
    seeds = gen.get("seeds")
    seeds = list(range(1, runs + 1)) if seeds is None else [int(s) for s in seeds]
    if len(seeds) != runs or len(set(seeds)) != runs:
        raise InputError(
            f"{where}.seeds",
            f"{seeds} is not {runs} distinct seeds (runs: {runs})",
            "Give one distinct seed per run, or seeds: null for 1..runs",
        )
    prefix = gen["name"]
    generated = {f"{prefix}{i}": seed for i, seed in enumerate(seeds, start=1)}
    for run in generated:
        if not SET_NAME.fullmatch(run) or PAIR_SEP in run:
            raise InputError(
                f"{where}.name", f"run name {run!r} is not usable in file names", "Rename"
            )
        if run in sets:
            raise InputError(
                f"{where}.name",
                f"run name {run!r} is also a theme set's name",
                "Choose another name: prefix for the generated runs",
            )
    if not transcripts:
        raise InputError(
            where, "is active but the config lists no transcripts", "List them under transcripts:"
        )
    if gen.get("base_url") and not gen.get("model"):
        raise InputError(
            f"{where}.model", "base_url is set but model is not", "Give the endpoint's model name"
        )
    settings = {k: gen[k] for k in GENERATE_KEYS if gen.get(k) is not None}
    return generated, settings


def generated_csv(run: str) -> str:
    return f"{GENERATED_DIR}/{run}.csv"


def transcript_files(config: dict) -> list[str]:
    files: list[str] = []
    for pattern in config.get("transcripts") or []:
        found = sorted(p for p in glob.glob(pattern) if Path(p).is_file())
        if not found:
            raise InputError(
                f"config transcripts ({pattern})",
                "matches no file",
                "Fix the path or glob, or remove the entry",
            )
        files += [p for p in found if p not in files]
    stems = {}
    for p in files:
        stem = Path(p).stem
        if stem in stems:
            raise InputError(
                f"config transcripts ({p})",
                f"has the same name as {stems[stem]}",
                "Transcripts are named by file stem: rename one",
            )
        stems[stem] = p
    return files
