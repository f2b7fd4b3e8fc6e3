"""The study a config describes: theme sets, comparisons and active methods.

Checked when the workflow is parsed, so a wrong path or name fails in the first second.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError
from .methods import KINDS, method_defaults, metrics_settings

SET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
METHOD_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
PAIR_SEP = "__vs__"
GENERATED_DIR = "results/generated"
# Keys of generate_themes that reach themesim.generate.GenerateSettings.
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


def pair_name(a: str, b: str) -> str:
    return f"{a}{PAIR_SEP}{b}"


@dataclass
class Study:
    name: str
    description: str
    reference: str
    sets: dict[str, str]  # set name -> theme file, reference first
    transcripts: list[str]
    template: str
    op: str
    sweep: dict
    methods: dict[str, dict]  # active methods only, defaults applied
    metrics: dict  # settings of the families beyond coverage
    pairs: list[tuple[str, str]] = field(default_factory=list)  # cross-set comparisons
    generated: dict[str, int] = field(default_factory=dict)  # LLM-generated run -> its seed
    generate: dict = field(default_factory=dict)  # settings of the generation (GENERATE_KEYS)

    @property
    def within(self) -> list[tuple[str, str]]:
        return [(s, s) for s in self.sets]

    def method_pairs(self, method: str) -> list[tuple[str, str]]:
        """The pairs a method writes similarity files for."""
        spec = self.methods[method]
        if spec["kind"] == "llm_judge":
            return self.pairs  # n_a * n_b calls per comparison; within-set would add n^2 more
        if spec["kind"] != "precomputed":
            return self.pairs + self.within
        return [p for p in self.pairs + self.within if Path(precomputed_csv(spec, *p)).is_file()]

    def methods_of(self, *kinds: str) -> list[str]:
        return [m for m, s in self.methods.items() if s["kind"] in kinds]

    @property
    def runs(self) -> list[str]:
        """Every set but the reference: the runs compared for run consistency."""
        return [s for s in self.sets if s != self.reference]

    @property
    def b_sets(self) -> list[str]:
        """Sets that appear as B in a comparison (the word-salad nulls are made of these)."""
        return list(dict.fromkeys(b for _, b in self.pairs))

    def embeddings_of(self, method: str) -> str:
        """The method whose embedding files a method reads (itself, or an abtt's base)."""
        spec = self.methods[method]
        return spec["base"] if spec["kind"] == "abtt" else method


def precomputed_csv(spec: dict, a: str, b: str) -> str:
    return str(Path(spec["dir"]) / f"{pair_name(a, b)}.csv")


def _set_entries(config: dict) -> dict[str, str]:
    sets: dict[str, str] = {}
    for i, entry in enumerate(config.get("theme_sets") or []):
        if isinstance(entry, str):
            entry = {"path": entry}
        path = entry["path"]
        name = entry.get("name") or Path(path).stem
        where = f"config theme_sets[{i}] ({path})"
        if not SET_NAME.match(name) or PAIR_SEP in name:
            raise InputError(
                where,
                f"set name {name!r} is not usable in file names",
                "Use letters, digits, '_', '.', '-' (no '__vs__'): rename the file or set name:",
            )
        if name in sets:
            raise InputError(
                where, f"set name {name!r} is used twice", "Give one of them a different name:"
            )
        if not Path(path).is_file():
            raise InputError(where, "file not found", "Check the path (relative to the run folder)")
        sets[name] = path
    return sets


def _generated(config: dict, sets: dict[str, str], transcripts: list[str]):
    """(run -> seed, settings) of generate_themes; ({}, {}) unless it is active."""
    gen = config.get("generate_themes") or {}
    if not gen.get("active", False):
        return {}, {}
    where = "config generate_themes"
    runs = int(gen.get("runs", 3))
    seeds = gen.get("seeds")
    seeds = list(range(1, runs + 1)) if seeds is None else [int(s) for s in seeds]
    if len(seeds) != runs or len(set(seeds)) != runs:
        raise InputError(
            f"{where}.seeds",
            f"{seeds} is not {runs} distinct seeds (runs: {runs})",
            "Give one distinct seed per run, or seeds: null for 1..runs",
        )
    prefix = gen.get("name", "generated_run")
    generated = {f"{prefix}{i}": seed for i, seed in enumerate(seeds, start=1)}
    for run in generated:
        if not SET_NAME.match(run) or PAIR_SEP in run:
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


def _transcripts(config: dict) -> list[str]:
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


def _methods(config: dict) -> dict[str, dict]:
    methods = {}
    for name, spec in (config.get("methods") or {}).items():
        spec = method_defaults(name, spec or {})
        if not spec.get("active", True):
            continue
        where = f"config methods.{name}"
        if not METHOD_NAME.match(name):
            raise InputError(where, "method name has unusable characters", "Rename the method")
        if spec.get("kind") not in KINDS:
            raise InputError(
                where, f"unknown kind {spec.get('kind')!r}", f"Use one of {', '.join(KINDS)}"
            )
        if not spec.get("thresholds"):
            raise InputError(where, "has no thresholds", "Give thresholds: [0.5] or a list")
        if spec["kind"] == "precomputed" and not (spec.get("dir") and Path(spec["dir"]).is_dir()):
            raise InputError(
                f"{where}.dir",
                f"folder {spec.get('dir')!r} not found",
                "Point dir: at a folder of {a}__vs__{b}.csv matrices",
            )
        methods[name] = spec
    for name, spec in methods.items():
        if spec["kind"] == "abtt":
            base = methods.get(spec.get("base"))
            if base is None or base["kind"] != "sentence_transformer":
                raise InputError(
                    f"config methods.{name}.base",
                    f"{spec.get('base')!r} is not an active sentence_transformer method",
                    "Name an active embedding method, e.g. base: minilm",
                )
    if not methods:
        raise InputError("config methods", "no method is active", "Set active: true on one")
    return methods


def prepare(config: dict) -> Study:
    """Check the config beyond its schema and work out the sets and comparisons."""
    sets = _set_entries(config)
    transcripts = _transcripts(config)
    generated, generate = _generated(config, sets, transcripts)
    sets |= {run: generated_csv(run) for run in generated}  # made by the generate rule
    if len(sets) < 2:
        raise InputError(
            "config theme_sets", "needs at least two theme sets", "List the theme files to compare"
        )
    reference = config.get("reference") or next(iter(sets))
    if reference not in sets:
        raise InputError(
            "config reference",
            f"{reference!r} is not one of the theme sets {sorted(sets)}",
            "Name the reference set by its set name (the file stem unless name: is given)",
        )
    sets = {reference: sets[reference], **{k: v for k, v in sets.items() if k != reference}}
    names = list(sets)
    if (config.get("comparisons") or {}).get("all_pairs"):
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    else:
        pairs = [(reference, b) for b in names[1:]]
    study_cfg = config.get("study") or {}
    study = Study(
        name=study_cfg.get("name", "study"),
        description=study_cfg.get("description", ""),
        reference=reference,
        sets=sets,
        transcripts=transcripts,
        template=config.get("text_template", "{name}: {description}"),
        op=config.get("op", "ge"),
        sweep=config.get("sweep") or {"start": 0.0, "stop": 1.0, "step": 0.01},
        methods=_methods(config),
        metrics=metrics_settings(config.get("metrics")),
        pairs=pairs,
        generated=generated,
        generate=generate,
    )
    for m in study.methods_of("precomputed"):
        spec = study.methods[m]
        for a, b in pairs:
            if not Path(precomputed_csv(spec, a, b)).is_file():
                raise InputError(
                    f"config methods.{m}",
                    f"no matrix for {a} vs {b}: {precomputed_csv(spec, a, b)} not found",
                    "Add that CSV (rows = A theme names, header = B theme names)",
                )
    return study
