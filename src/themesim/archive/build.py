"""An archive a paper can cite: inputs, config as run, results, code, environment and checksums.

One deterministic zip (sorted entries, fixed timestamps and permissions), so the same results give
the same bytes; `SHA256SUMS` lists every other entry and `themesim.archive.verify` rechecks it.
"""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import logging
import os
import platform
import re
import shutil
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path, PurePosixPath

import yaml

from themesim import __version__
from themesim.archive.verify import SUMS
from themesim.errors import InputError
from themesim.io.files import sha256_file
from themesim.io.manifest import MANIFEST, listed_files, verify, verify_inputs

WITHHELD = "WITHHELD.sha256"
CONFIG = "config/config.yaml"
LOCK = "environment/pip-freeze.txt"
PROVENANCE = "environment/provenance.yaml"
# Zip's earliest date: the same results give the same archive bytes whenever they are packed.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
# Already compressed: deflating them again costs time and gains nothing.
STORED_SUFFIXES = (".png", ".parquet", ".zip", ".gz", ".jpg", ".jpeg", ".docx")
# The workflow as a runnable folder: files, then folders searched recursively.
CODE_FILES = ("Snakefile", "Makefile", "pyproject.toml", "environment.yml")
CODE_DIRS = ("workflow", "scripts", "src/themesim", "requirements", "profiles")
SKIP_PARTS = {"__pycache__", ".pytest_cache", ".ruff_cache"}
# Results that copy input text verbatim; withheld (hash only) when the inputs are confidential.
TEXT_RESULTS = (
    "results/themes/",
    "results/transcripts/",
    "results/embeddings/",
    "results/keyword_embeddings/",
    "results/segment_embeddings/",
    "results/nulls/",
    "results/cache/",  # LLM caches: judge, generation and paraphrase prompts hold theme text
    "results/ceiling/paraphrases.csv",  # the reference themes and their paraphrases
)
SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def archive_name(study_name: str) -> str:
    """The study name as a file name: runs of other characters become '-'."""
    name = SAFE_NAME.sub("-", study_name).strip("-.")
    return name or "study"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def environment_lock() -> str:
    """`name==version` of every distribution the running interpreter sees, sorted by name.

    Like `pip freeze --all` without pip; themesim itself is left out (its source is in the
    archive). The first distribution on sys.path wins, as for imports.
    """
    seen: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if not name:
            continue
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key not in seen and key != "themesim":
            seen[key] = f"{name}=={dist.version}"
    return "".join(seen[k] + "\n" for k in sorted(seen))


def code_files(root) -> dict[str, Path]:
    """The workflow's own files under `root` (the Snakefile's folder) by relative name, sorted."""
    root = Path(root)
    found = [root / f for f in CODE_FILES if (root / f).is_file()]
    for d in CODE_DIRS:
        for p in sorted((root / d).rglob("*")):
            rel = p.relative_to(root)
            if p.is_file() and not SKIP_PARTS & set(rel.parts) and p.suffix != ".pyc":
                found.append(p)
    named = {p.relative_to(root).as_posix(): p for p in found}
    return {name: named[name] for name in sorted(named)}


def _check_entry_name(name: str) -> None:
    # sha256sum escapes these; we keep the format plain instead.
    if "\n" in name or "\\" in name or name.startswith("/") or ".." in name.split("/"):
        raise InputError(
            f"archive entry {name!r}",
            "has a character or part SHA256SUMS cannot hold",
            "Rename the file (no newline, backslash or '..')",
        )


def _inside(path: str) -> str | None:
    """`path` as a relative posix path when it lies inside the run folder, else None."""
    p = PurePosixPath(os.path.normpath(path).replace(os.sep, "/"))
    if p.is_absolute() or (p.parts and p.parts[0] == ".."):
        return None
    return p.as_posix()


def _outside_dir(path: str) -> str:
    """A stable folder in the archive for inputs from outside the run folder."""
    digest = sha256_bytes(os.path.abspath(os.path.dirname(path)).encode())[:8]
    return f"inputs/external/{digest}"


@dataclass
class Inputs:
    """Where each input goes in the archive, and the config that finds it there."""

    files: dict[str, str] = field(default_factory=dict)  # archive name -> source path
    config: dict = field(default_factory=dict)
    moved: dict[str, str] = field(default_factory=dict)  # original path -> archive name


def _place(path: str, taken: set[str]) -> str:
    name = _inside(path) or f"{_outside_dir(path)}/{os.path.basename(path)}"
    if name in taken or name.startswith("results/"):
        name = f"inputs/{name}"
    return name


def _glob_matches(pattern: str, names) -> set[str]:
    """Names a relative, non-recursive glob would find (each '/' part matched on its own)."""
    parts = PurePosixPath(pattern).parts
    out = set()
    for n in names:
        n_parts = PurePosixPath(n).parts
        if len(n_parts) == len(parts) and all(map(fnmatch.fnmatchcase, n_parts, parts)):
            out.add(n)
    return out


def place_inputs(
    config: dict,
    *,
    sets: dict[str, str],
    transcripts: list[str],
    precomputed: dict[str, list[str]],
    taken,
    coded: dict[str, str] | None = None,
) -> Inputs:
    """Lay out the theme files, coded-segments files, transcripts and precomputed matrices
    inside the archive.

    Inputs inside the run folder keep their relative paths, so the config as run finds them
    unchanged; others go under `inputs/` and their config entries are rewritten.
    """
    taken = set(taken)
    out = Inputs(config=copy.deepcopy(config))
    placed: dict[str, str] = {}

    def add(path: str, name: str | None = None) -> str:
        if path not in placed:
            name = name or _place(path, taken)
            _check_entry_name(name)
            taken.add(name)
            placed[path] = name
            out.files[name] = path
            if name != _inside(path):
                out.moved[path] = name
        return placed[path]

    for entry_path in sets.values():
        add(entry_path)
    entries = out.config.get("theme_sets") or []
    for i, entry in enumerate(entries):
        path = entry if isinstance(entry, str) else entry["path"]
        if path in out.moved:
            new = out.moved[path]
            entries[i] = new if isinstance(entry, str) else {**entry, "path": new}
    # Coded segments (`theme_sets[i].segments`): the config as run must find them too.
    for path in (coded or {}).values():
        add(path)
    for i, entry in enumerate(entries):
        if isinstance(entry, dict) and entry.get("segments") in out.moved:
            entries[i] = {**entry, "segments": out.moved[entry["segments"]]}

    names = [add(p) for p in transcripts]
    # Keep the globs as run when they find exactly these files in the archive; else list them.
    found: set = set()
    for pattern in out.config.get("transcripts") or []:
        rel = _inside(pattern)
        found |= _glob_matches(rel, taken) if rel else {None}
    if found != set(names):
        out.config["transcripts"] = names

    for method, files in precomputed.items():
        folder = _inside(out.config["methods"][method]["dir"])
        if folder is None or folder.startswith("results/"):
            folder = f"inputs/precomputed/{archive_name(method)}"
            out.config["methods"][method]["dir"] = folder
        for f in files:
            add(f, f"{folder}/{os.path.basename(f)}")
    return out


def citation(*, study: dict, authors, code_version: str | None) -> str:
    """CITATION.cff (format 1.2.0) for the study's results."""
    people = []
    for a in authors or []:
        people.append({"name": a} if isinstance(a, str) else dict(a))
    if not people:
        people = [{"name": f"Authors of {study['name']} (set archive.authors in the config)"}]
    cff = {
        "cff-version": "1.2.0",
        "message": "If you use these results, please cite them as below.",
        "type": "dataset",
        "title": f"{study['name']}: theme-set comparison results (themesim)",
        "authors": people,
    }
    if study.get("description"):
        cff["abstract"] = study["description"]
    cff["keywords"] = ["thematic analysis", "theme similarity", "themesim"]
    cff["references"] = [
        {
            "type": "software",
            "title": "themesim",
            "version": code_version or __version__,
            "authors": [{"name": "themesim contributors"}],
        }
    ]
    return yaml.safe_dump(cff, sort_keys=False, allow_unicode=True)


def readme(*, study: dict, archive_file: str, confidential: bool, provenance: dict) -> str:
    """How to check and rerun the archive; no dates, so it is as deterministic as the rest."""
    lines = [
        f"# {study['name']}: themesim results archive",
        "",
        study.get("description") or "",
        "",
        f"Workflow code version: {provenance['git_commit'] or 'unknown (not a git checkout)'};"
        f" themesim {provenance['themesim_version']}; Python {provenance['python']}.",
        "",
        "## Contents",
        "",
        "| path | what |",
        "|---|---|",
        f"| `{CONFIG}` | the config as run (defaults filled in); its input paths lead here |",
        "| `results/metrics/` | metric tables, one folder per method |",
        "| `results/similarity/`, `results/embeddings/` | similarity matrices, embeddings |",
        "| `results/plots/`, `results/report/` | plots and the summary report |",
        f"| `{LOCK}` | `name==version` of every package the run used |",
        f"| `{PROVENANCE}` | git commit, themesim and Python versions, platform |",
        "| `Snakefile`, `workflow/`, `scripts/`, `src/themesim/` | the workflow that made it |",
        f"| `{SUMS}` | sha256 of every other file |",
        "| `CITATION.cff` | how to cite these results |",
    ]
    if confidential:
        lines += [
            f"| `{WITHHELD}` | sha256 of the confidential inputs and text-bearing results |",
            "",
            "The inputs were marked confidential (`archive.confidential: true`): the theme files,",
            "coded segments, transcripts, precomputed matrices, normalised texts, embeddings",
            "(they hold the embedded text), the LLM caches (judge, generation, paraphrases,",
            f"coder) and the paraphrases of the reference themes are not here; `{WITHHELD}`",
            "lists their sha256.",
            "Metric tables, plots and the report still name the themes, as results do. To rerun,",
            f"put the inputs at the listed paths and check them with `sha256sum -c {WITHHELD}`.",
        ]
    else:
        lines += [
            "",
            "Theme files, coded-segments files, transcripts and any precomputed matrices are at",
            "the paths the config names.",
        ]
    lines += [
        "",
        "## Verify",
        "",
        "```sh",
        f"themesim verify {archive_file}        # or, unpacked: sha256sum -c {SUMS}",
        "```",
        "",
        "## Reproduce",
        "",
        "```sh",
        f"unzip {archive_file} -d study && cd study",
        "python3.11 -m venv .venv",
        f"grep '^torch==' {LOCK} | xargs .venv/bin/pip install \\",
        "    --index-url https://download.pytorch.org/whl/cpu   # or the build for your GPU",
        f"grep -v '^torch==' {LOCK} | .venv/bin/pip install --no-deps -r /dev/stdin",
        ".venv/bin/pip install --no-deps -e .   # themesim itself, from src/",
        "mv results results.archived",
        "HF_HUB_OFFLINE=1 .venv/bin/snakemake --cores 4",
        "diff -r results.archived/metrics results/metrics && echo identical metric tables",
        "```",
        "",
        "With the same package versions the metric tables come out byte-identical. Plots,",
        "embeddings and the report can differ in their last bits on another machine.",
        "",
    ]
    return "\n".join(lines)


def provenance_info(code_version: str | None) -> dict:
    return {
        "git_commit": code_version,
        "themesim_version": __version__,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
    }


def _digest(data: bytes | Path) -> str:
    return sha256_bytes(data) if isinstance(data, bytes) else sha256_file(data)


def sha256sums(entries: dict[str, bytes | Path]) -> str:
    """sha256sum's format: `<hex>  <name>`, one line per entry, sorted by name."""
    return "".join(f"{_digest(entries[n])}  {n}\n" for n in sorted(entries))


def write_zip(path, entries: dict[str, bytes | Path]) -> None:
    """A deterministic zip: sorted names, fixed date, permissions and compression.

    An entry is bytes, or a file streamed into the zip (large caches never sit in memory).
    """
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(f"{path}.part")
    with zipfile.ZipFile(tmp, "w") as zf:
        for name in sorted(entries):
            data = entries[name]
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.create_system = 3  # unix, so the permission bits below mean the same everywhere
            info.external_attr = 0o100644 << 16
            stored = name.lower().endswith(STORED_SUFFIXES)
            info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
            if isinstance(data, bytes):
                zf.writestr(info, data)
                continue
            info.file_size = Path(data).stat().st_size
            with open(data, "rb") as src, zf.open(info, "w") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    tmp.replace(path)


def _folder_files(folder) -> list[Path]:
    """A folder output's files, sorted; Snakemake's hidden marker files left out."""
    return sorted(p for p in Path(folder).rglob("*") if p.is_file() and not p.name.startswith("."))


def _manifest_files(path) -> list[Path]:
    """The files a manifest result lists, each present and unchanged (themesim.io.manifest)."""
    if Path(path).name != MANIFEST:
        return []
    files = listed_files(path)
    for f in files:
        verify(f)
    return files


@dataclass(frozen=True)
class ArchiveSpec:
    """What an archive holds. `results` and the inputs are paths relative to the run folder;
    `code` maps names in the archive (relative to the Snakefile's folder) to the workflow's
    files; `coded`: set -> its coded-segments file (an input like the theme files: withheld
    when confidential); `lock`: the environment lock to write (default: the running one's)."""

    config: dict
    study: dict
    sets: dict[str, str]
    transcripts: list[str]
    precomputed: dict[str, list[str]]
    results: list[str]
    judge_cache: str | None
    code: dict[str, str]
    code_version: str | None
    coded: dict[str, str] | None = None
    caches: Sequence[str] = ()
    confidential: bool = False
    authors: Sequence = ()
    lock: str | None = None


def _put(entries: dict[str, bytes | Path], name: str, data: bytes | Path) -> None:
    _check_entry_name(name)
    if name in entries:
        raise InputError(
            f"archive entry {name}",
            "would be written twice (an input or result has the same path as another file)",
            "Move that input to a folder of its own and point the config at it",
        )
    entries[name] = data


def _result_files(spec: ArchiveSpec) -> list[str]:
    """The results to pack, each table checked against the sha256 its job recorded."""
    # A folder output (all-pairs heatmaps) goes in file by file.
    files = [str(f) for r in spec.results for f in (_folder_files(r) if Path(r).is_dir() else [r])]
    # So do the pair files a manifest lists (all pairs' similarities and transport plans),
    # each checked against its sha256 first.
    files += [str(f) for r in spec.results for f in _manifest_files(r)]
    # Every results table, against the sha256 its job recorded: an archive never carries
    # a number no job computed (a table edited by hand stops the archive with one line).
    verify_inputs(files)
    # LLM caches (judge, theme generation) accumulate outside the rules' outputs.
    files += [c for c in (spec.judge_cache, *spec.caches) if c and Path(c).is_file()]
    return sorted(set(files))


def _add_results(entries, withheld: dict[str, str], spec: ArchiveSpec) -> None:
    for r in _result_files(spec):
        name = _inside(r)
        if name is None or not name.startswith("results/") or name.startswith("results/archive/"):
            continue  # only the run folder's results; never an earlier archive
        if spec.confidential and name.startswith(TEXT_RESULTS):
            withheld[name] = sha256_file(r)
        else:
            _put(entries, name, Path(r))


def _add_inputs(entries, withheld: dict[str, str], spec: ArchiveSpec) -> Inputs:
    reserved = {CONFIG, LOCK, PROVENANCE, SUMS, WITHHELD, "README.md", "CITATION.cff"}
    placed = place_inputs(
        spec.config,
        sets=spec.sets,
        transcripts=spec.transcripts,
        precomputed=spec.precomputed,
        taken=set(entries) | reserved,
        coded=spec.coded,
    )
    for name, src in sorted(placed.files.items()):
        if spec.confidential:
            withheld[name] = sha256_file(src)
        else:
            _put(entries, name, Path(src))
    return placed


def _add_about(entries, out, spec: ArchiveSpec, placed: Inputs) -> None:
    """The config as run, environment, provenance, citation and README."""
    prov = provenance_info(spec.code_version)
    if placed.moved:
        prov["inputs_moved"] = dict(sorted(placed.moved.items()))
    config = yaml.safe_dump(placed.config, sort_keys=False, allow_unicode=True)
    _put(entries, CONFIG, config.encode())
    _put(entries, LOCK, (environment_lock() if spec.lock is None else spec.lock).encode())
    _put(entries, PROVENANCE, yaml.safe_dump(prov, sort_keys=False, allow_unicode=True).encode())
    cff = citation(study=spec.study, authors=spec.authors, code_version=spec.code_version)
    _put(entries, "CITATION.cff", cff.encode())
    text = readme(
        study=spec.study,
        archive_file=Path(out).name,
        confidential=spec.confidential,
        provenance=prov,
    )
    _put(entries, "README.md", text.encode())


def build_archive(out, spec: ArchiveSpec) -> dict[str, bytes | Path]:
    """Write the archive zip to `out`; returns its entries (bytes or file) without SHA256SUMS."""
    entries: dict[str, bytes | Path] = {}
    for name, path in spec.code.items():
        _put(entries, name, Path(path))
    withheld: dict[str, str] = {}
    _add_results(entries, withheld, spec)
    placed = _add_inputs(entries, withheld, spec)
    _add_about(entries, out, spec, placed)
    if spec.confidential:
        listing = "".join(f"{withheld[n]}  {n}\n" for n in sorted(withheld))
        _put(entries, WITHHELD, listing.encode())
    write_zip(out, entries | {SUMS: sha256sums(entries).encode()})
    logging.getLogger("themesim").info(
        "%s: %d files, %d withheld (hash only)", out, len(entries) + 1, len(withheld)
    )
    return entries
