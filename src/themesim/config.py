"""The study a config describes: theme sets, comparisons and active methods.

Checked when the workflow is parsed, so a wrong path or name fails in the first second.
"""

from __future__ import annotations

import copy
import difflib
import functools
import glob
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from themesim.coder.settings import bases, coder_settings
from themesim.defaults import SCHEMA_PATH, default, parse_yaml, section_defaults
from themesim.defaults import schema as workflow_schema
from themesim.errors import InputError
from themesim.kinds import KINDS, method_defaults
from themesim.kinds import get as get_kind
from themesim.metrics.settings import equivalence_settings, metrics_settings

SET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]*")  # fullmatch: "$" passes a final "\n"
METHOD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")
PAIR_SEP = "__vs__"
GENERATED_DIR = "results/generated"
GENERATED_GROUP = "generated"  # the run group of the LLM-generated runs (generate_themes)
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
    segments: dict[str, str] = field(default_factory=dict)  # set -> coded file or .qdpx
    levels: dict[str, str] = field(default_factory=dict)  # .qdpx set -> top|leaf|all
    users: dict[str, str] = field(default_factory=dict)  # .qdpx set -> its user (name or guid)
    grounding: dict = field(default_factory=dict)  # `grounding:`, defaults filled in
    run_groups: dict[str, list[str]] = field(default_factory=dict)  # group -> its runs (>= 2)
    ceiling: dict = field(default_factory=dict)  # `ceiling:` (paraphrase ceiling), defaults in
    # .qdpx theme sets whose sources are the transcripts (the config lists none)
    transcript_projects: list[str] = field(default_factory=list)
    # method -> the pairs it runs, for a method whose `comparisons:` restricts them
    restricted: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # human sets of the same data, the reference first; `equivalence:` with defaults
    reference_group: list[str] = field(default_factory=list)
    equivalence: dict = field(default_factory=dict)

    def pairs_for(self, method: str) -> list[tuple[str, str]]:
        """The comparisons a method runs: its `comparisons:`, else every one of the study."""
        return self.restricted.get(method, self.pairs)

    def sets_for(self, method: str) -> list[str]:
        """The sets of a method's comparisons, in set order (its per-set work)."""
        from themesim.comparisons import pair_sets

        if method not in self.restricted:  # every set is in a comparison of the study
            return list(self.sets)
        return pair_sets(self.sets, self.restricted[method])

    @property
    def within(self) -> list[tuple[str, str]]:
        return [(s, s) for s in self.sets]

    def method_pairs(self, method: str) -> list[tuple[str, str]]:
        """The pairs a method writes similarity files for."""
        spec = self.methods[method]
        within = [(s, s) for s in self.sets_for(method)]
        return get_kind(spec["kind"]).study_pairs(spec, self.pairs_for(method), within)

    def methods_with(self, capability: str) -> list[str]:
        """Active methods whose kind has that capability (a flag of themesim.kinds.Kind)."""
        return [m for m, s in self.methods.items() if getattr(get_kind(s["kind"]), capability)]

    @property
    def runs(self) -> list[str]:
        """Every set in a run group, once, in group order: the sets run consistency reads."""
        return list(dict.fromkeys(s for group in self.run_groups.values() for s in group))

    @property
    def generators(self) -> dict[str, list[str]]:
        """Each run group, and each set in no group, as one generator of the verdicts."""
        from themesim.metrics.generators import generators_of

        return generators_of(list(self.sets), self.reference_group, self.run_groups)

    @property
    def b_sets(self) -> list[str]:
        """Sets that appear as B in a comparison (the word-salad nulls are made of these)."""
        return list(dict.fromkeys(b for _, b in self.pairs))

    def embeddings_of(self, method: str) -> str:
        """The method whose embedding files a method reads (itself, or an abtt's base)."""
        spec = self.methods[method]
        return get_kind(spec["kind"]).embeddings_of(method, spec)


def _key_path(path) -> str:
    return ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[")


def _schema_at(schema: dict, key) -> dict | None:
    """The subschema of a mapping key or list index (properties, additionalProperties,
    items), or None where the schema says nothing."""
    if isinstance(key, int):
        items = schema.get("items")
        return items if isinstance(items, dict) else None
    props = schema.get("properties") or {}
    if key in props:
        return props[key]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _accepts(schema: dict) -> tuple[set[str], list]:
    """(JSON types, constant values) a value may take under `schema` and its anyOf/oneOf."""
    types, consts = set(), []
    for branch in [schema, *schema.get("anyOf", []), *schema.get("oneOf", [])]:
        t = branch.get("type")
        types |= {t} if isinstance(t, str) else set(t or [])
        if "const" in branch:
            consts.append(branch["const"])
        consts += list(branch.get("enum") or [])
    return types, consts


def _as_typed(text: str, types: set[str]) -> tuple[bool, object]:
    """(True, `text` as the integer, number, boolean or null the schema wants), or
    (False, None) when it is none of them."""
    word = text.strip()
    whole = re.fullmatch(r"[+-]?\d+", word) is not None
    if "integer" in types and whole:
        return True, int(word)
    if "number" in types:
        try:
            value = float(word)
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return True, int(word) if whole else value
    if "boolean" in types and word.lower() in ("true", "false"):
        return True, word.lower() == "true"
    if "null" in types and word.lower() in ("null", "~"):
        return True, None
    return False, None


@functools.cache
def _load_schema(path: str, mtime_ns: int) -> dict:
    return parse_yaml(path)


def load_schema(schema_path) -> dict:
    """The config schema (read once per process and file version; do not modify it)."""
    path = Path(schema_path).resolve()
    if path == SCHEMA_PATH:  # the workflow's: the copy themesim.defaults keeps
        return workflow_schema()
    return _load_schema(str(path), path.stat().st_mtime_ns)


def coerce_cli_values(config: dict, cli, schema_path) -> list[str]:
    """Turn the text Snakemake's `--config` hands over for nested numbers, booleans and nulls
    into what the schema wants there, in `config` (the merged config); returns one line per
    value changed, for the log.

    Snakemake parses a top-level `--config key=0.6` as a number but reads a nested value
    (`methods={"minilm": {"thresholds": [0.6]}}`) with YAML's base loader, all text. Only the
    values given on the command line (`cli`) are touched: a number quoted in a config file
    stays an error ("remove the quotes").
    """
    schema = load_schema(schema_path)
    notes: list[str] = []

    def walk(given, merged, node, path):
        if node is None:
            return merged
        if isinstance(given, dict) and isinstance(merged, dict):
            for k, v in given.items():
                if k in merged:
                    merged[k] = walk(v, merged[k], _schema_at(node, k), [*path, k])
            return merged
        if isinstance(given, list) and isinstance(merged, list) and len(given) == len(merged):
            for i, v in enumerate(given):
                merged[i] = walk(v, merged[i], _schema_at(node, i), [*path, i])
            return merged
        if isinstance(merged, str) and given == merged:
            types, consts = _accepts(node)
            if "string" in types or merged in consts:
                return merged
            ok, value = _as_typed(merged, types)
            if ok:
                notes.append(
                    f"config {_key_path(path)}: {merged!r} from --config read as "
                    f"{json.dumps(value)} "
                    "(Snakemake's --config passes nested values as text)"
                )
                return value
        return merged

    for key, value in dict(cli or {}).items():
        if key in config:
            config[key] = walk(value, config[key], _schema_at(schema, key), [key])
    return notes


# Appended to a schema error in a value given with --config.
CLI_HINT = (
    " (The value came from --config, which passes nested values as text: write them in a "
    "YAML file and add it with --configfile, e.g. `snakemake --cores 8 --configfile "
    "config/config.yaml overrides.yaml`.)"
)


def _given(cli, path) -> bool:
    """Whether `path` lies inside a value given on the command line (`cli`)."""
    node = cli
    for key in path:
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and key < len(node):
            node = node[key]
        else:
            return False
    return True


def _filling_defaults(validator_class):
    """The validator class that, as it validates an object, gives each property the
    schema has a default for and the config lacks that default (as Snakemake's `validate`
    does: the workflow and the report see every setting)."""
    from jsonschema import validators

    properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, props, instance, schema):
        if isinstance(instance, dict):
            for name, sub in props.items():
                if "default" in sub:
                    instance.setdefault(name, copy.deepcopy(sub["default"]))
        yield from properties(validator, props, instance, schema)

    return validators.extend(validator_class, {"properties": set_defaults})


def check_schema(config: dict, schema_path, cli=None, *, defaults: bool = False) -> None:
    """Validate the config against its JSON schema with a one-line error naming the key.

    defaults: fill in the schema's defaults in the same pass (the workflow's one check of
    its config at parse time). cli: the values given with --config; an error inside one
    says how to give it instead.
    """
    import jsonschema

    schema = load_schema(schema_path)
    cls = jsonschema.Draft202012Validator
    validator = (_filling_defaults(cls) if defaults else cls)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is None:
        return
    try:
        _raise_schema_error(error)
    except InputError as e:
        if cli and error.absolute_path and _given(cli, list(error.absolute_path)):
            raise InputError(e.where, e.problem, e.fix + CLI_HINT) from None
        raise


def _raise_schema_error(error) -> None:
    where = "config" + (f" {_key_path(error.absolute_path)}" if error.absolute_path else "")
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if allowed else []
        if extra:
            key = extra[0]
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise InputError(
                f"{where}.{key}" if where != "config" else f"config {key}",
                "unknown key",
                f"Fix the spelling ({hint}accepted here: {', '.join(allowed)}); "
                "every key is described in config/README.md",
            )
    if error.validator == "enum":
        close = difflib.get_close_matches(
            str(error.instance), [str(v) for v in error.validator_value], n=1
        )
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise InputError(
            where,
            f"{error.instance!r} is not allowed{hint}",
            f"Use one of {', '.join(map(str, error.validator_value))}",
        )
    if error.validator == "minItems":
        n = error.validator_value
        raise InputError(
            where,
            f"has {len(error.instance)} item(s) but needs at least {n}",
            f"List at least {n} (see config/README.md)",
        )
    if error.validator == "type":
        want = error.validator_value
        want = " or ".join(want) if isinstance(want, list) else want
        example = {"array": "a list, e.g. [0.5]", "object": "a mapping of keys"}.get(want, want)
        if isinstance(error.instance, str) and {"number", "integer"} & set(want.split(" or ")):
            try:
                number = float(error.instance)
            except ValueError:
                number = None
            mantissa, _, exponent = error.instance.strip().lower().partition("e")
            if number is not None and exponent and "." not in mantissa:
                # YAML 1.1 (PyYAML) reads 1e-20, with no '.', as text
                raise InputError(
                    where,
                    f"{error.instance!r} is text, not a number (YAML reads e-notation "
                    "without a decimal point as text)",
                    f"Write it as {mantissa}.0e{exponent}",
                )
            if number is not None:
                raise InputError(
                    where, f"{error.instance!r} is text, not a number", "Remove the quotes"
                )
        raise InputError(
            where, f"{error.instance!r} is not of type {want}", f"Write it as {example}"
        )
    if error.validator in ("anyOf", "oneOf"):
        accepted = []
        for branch in error.validator_value:
            if "const" in branch:
                accepted.append(repr(branch["const"]))
            elif branch.get("type"):
                t = branch["type"]
                accepted.append(" or ".join(t) if isinstance(t, list) else f"a {t}")
        if accepted:
            raise InputError(
                where,
                f"{error.instance!r} is not {' or '.join(accepted)}",
                "See config/README.md for this key",
            )
    raise InputError(where, error.message, "See config/README.md for this key")


def _check_thresholds(name: str, spec: dict) -> None:
    where = f"config methods.{name}.thresholds"
    kind = get_kind(spec["kind"])
    low, high = kind.threshold_range or (-math.inf, math.inf)
    scores = spec.get("scale", "cosine") if kind.score_name == "cosine" else kind.score_name
    if spec.get("scale") == "z":  # standard deviations, unbounded
        low, high = -math.inf, math.inf
    elif spec.get("scale") in ("angular", "calibrated") or (spec.get("clamp") and low < 0):
        low, high = 0.0, 1.0
    for t in spec["thresholds"]:
        if t == "calibrated":  # resolved from the calibration output (docs/thresholds.md)
            continue
        if not isinstance(t, int | float) or isinstance(t, bool) or not math.isfinite(t):
            raise InputError(
                where, f"{t!r} is not a number", "Give thresholds as numbers, e.g. [0.5]"
            )
        if not low <= t <= high:
            raise InputError(
                where,
                f"{t:g} is outside [{low:g}, {high:g}], the range of this method's {scores} scores",
                f"Give thresholds between {low:g} and {high:g} (a percentage such as 56 "
                "is written 0.56)",
            )
    seen = set()
    for t in spec["thresholds"]:
        if t in seen:  # each threshold is a row of the metric tables: twice would repeat it
            shown = t if isinstance(t, str) else f"{t:g}"
            raise InputError(
                where, f"{shown} is listed twice", "List each threshold once, e.g. [0.5, 0.6]"
            )
        seen.add(t)


MAX_SWEEP_POINTS = 10_001  # step 0.0001 over [0, 1]; more only costs time and memory


def _check_sweep(sweep: dict) -> dict:
    sweep = default("sweep") | sweep
    start, stop, step = sweep["start"], sweep["stop"], sweep["step"]
    if stop < start:
        raise InputError(
            "config sweep", f"stop {stop:g} is below start {start:g}", "Swap start and stop"
        )
    if step <= 0 or (stop - start) / step + 1 > MAX_SWEEP_POINTS:
        raise InputError(
            "config sweep.step",
            f"step {step:g} gives {'no' if step <= 0 else f'{(stop - start) / step + 1:.0f}'} "
            f"thresholds between {start:g} and {stop:g}",
            f"Use a step > 0 giving at most {MAX_SWEEP_POINTS} thresholds, e.g. 0.01",
        )
    return {"start": start, "stop": stop, "step": step}


def _check_calibrated(name: str, spec: dict, config: dict) -> None:
    """`calibrated` needs rated pairs and a method kind that can score them."""
    where = f"config methods.{name}"
    if not (config.get("calibration") or {}).get("pairs"):
        raise InputError(
            where,
            "uses calibrated but calibration.pairs is not set",
            "Set calibration: {pairs: data/rated_pairs.csv} (docs/thresholds.md)",
        )
    if not get_kind(spec["kind"]).calibrates:
        raise InputError(
            where,
            f"a {spec['kind']} method cannot be calibrated yet",
            "Give this method numeric thresholds",
        )
    if spec.get("scale") == "z":
        raise InputError(where, "calibrated thresholds are not z scores", "Use scale: cosine")


def _set_entries(config: dict) -> dict[str, str]:
    sets: dict[str, str] = {}
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
        sets[name] = path
    return sets


# The defaults of the study-level sections below: the schema's (themesim.defaults).
CEILING_DEFAULTS = default("ceiling")  # active, k; the rest: the paraphrase settings'
# Figure limits of a study with many comparisons (`plots:`; null = no limit).
PLOTS_DEFAULTS = section_defaults("plots")
ARCHIVE_DEFAULTS = section_defaults("archive")


def _ceiling(config: dict) -> dict:
    """ceiling: with defaults, its paraphrase settings checked when it is active."""
    ceiling = CEILING_DEFAULTS | (config.get("ceiling") or {})
    if ceiling["active"]:
        from themesim.llm.paraphrase import ParaphraseSettings

        ParaphraseSettings(**{k: v for k, v in ceiling.items() if k != "active" and v is not None})
    return ceiling


# grounding: without its coder (themesim.coder.settings); bootstrap is read for one release
# (0 still turns the intervals off).
GROUNDING_DEFAULTS = {k: v for k, v in section_defaults("grounding").items() if k != "coder"}


def _set_segments(config: dict, sets: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
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


def _set_users(config: dict, sets: dict[str, str], segments: dict[str, str]) -> dict[str, str]:
    """.qdpx set -> the user whose codings are its coded segments (`user:`). A .qdpx set whose
    codings come from two or more users and that names none is refused: merged, they would
    pass for one coder's (issue 34)."""
    from themesim.io.refi_qda import check_study_users

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
            check_study_users(entry["path"], user, name, where, user_where)
            if user is not None:
                users[name] = str(user)
    return users


def _generated(config: dict, sets: dict[str, str], transcripts: list[str]):
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


def _run_groups(config: dict, sets: dict[str, str], generated: dict) -> dict[str, list[str]]:
    """run_groups of the config, checked, plus the generated runs as a group of their own.

    Run consistency is only meaningful between repeated runs of one process, so a set is a
    run only when a group names it.
    """
    groups: dict[str, list[str]] = {}
    for name, members in (config.get("run_groups") or {}).items():
        where = f"config run_groups.{name}"
        if not SET_NAME.fullmatch(str(name)):
            raise InputError(
                where, f"group name {name!r} has unusable characters", "Use letters, digits, _ . -"
            )
        if generated and name == GENERATED_GROUP:
            raise InputError(
                where,
                f"{GENERATED_GROUP!r} is the group of the generate_themes runs",
                "Give this group another name",
            )
        members = [str(m) for m in members or []]
        if len(members) < 2:
            raise InputError(
                where,
                f"has {len(members)} set(s) but a run group needs at least 2",
                "List two or more theme sets in it, or remove the group",
            )
        for m in members:
            if m in generated:
                raise InputError(
                    where,
                    f"{m!r} is a generated run: those form the group {GENERATED_GROUP!r} by "
                    "themselves",
                    f"Remove {m!r} from {name!r}",
                )
        _check_set_names(where, members, sets)
        groups[str(name)] = members
    if len(generated) >= 2:
        groups[GENERATED_GROUP] = list(generated)
    return groups


def _check_set_names(where: str, members: list[str], sets) -> None:
    """InputError unless every member names a theme set, each once."""
    for m in members:
        if m not in sets:
            close = difflib.get_close_matches(m, list(sets), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InputError(
                where,
                f"{m!r} is not a theme set{hint}",
                f"Use set names (file stem unless name: is given): {', '.join(sets)}",
            )
    if len(set(members)) != len(members):
        twice = next(m for m in members if members.count(m) > 1)
        raise InputError(where, f"{twice!r} is listed twice", "List each set once")


def _reference_group(config: dict, sets: dict[str, str], reference: str) -> list[str]:
    """reference_group: checked set names, the reference first; [] when not given."""
    members = [str(m) for m in config.get("reference_group") or []]
    if not members:
        return []
    where = "config reference_group"
    _check_set_names(where, members, sets)
    if len(members) < 2:
        raise InputError(
            where,
            f"has {len(members)} set but a reference group needs at least 2",
            "List the reference and at least one more human theme set, or remove the key",
        )
    if reference not in members:
        raise InputError(
            where,
            f"does not include the reference set {reference!r}: the sets are compared on its "
            "themes",
            f"Add {reference!r} to reference_group, or make one of its sets the reference",
        )
    return [reference] + [m for m in members if m != reference]


def _check_groups(analysts: list[str], run_groups: dict[str, list[str]]) -> None:
    """A set is an analyst or a run of one generator, never both, never of two groups."""
    seen: dict[str, str] = {}
    for name, members in run_groups.items():
        mixed = [m for m in members if m in analysts]
        if mixed:
            raise InputError(
                f"config run_groups.{name}",
                f"mixes analysts and runs: {', '.join(map(repr, mixed))} is in reference_group",
                "A run group holds runs of one generator: remove the analyst from it, or "
                "from reference_group",
            )
        for m in members:
            if m in seen:
                raise InputError(
                    f"config run_groups.{name}",
                    f"{m!r} is also in run group {seen[m]!r}: a set is in one group",
                    f"Remove {m!r} from one of the two groups",
                )
            seen[m] = name


def analyst_pairs(pairs, names: list[str], analysts: list[str]) -> list[tuple[str, str]]:
    """The comparisons a verdict needs beyond `pairs`: every analyst of the reference group
    as reference in turn (analyst vs each other set; docs/verdicts.md). A pair already made
    in either direction is not made again (its themes table has both sides)."""
    have = set(pairs) | {(b, a) for a, b in pairs}
    extra = []
    for r in analysts[1:]:
        for x in names:
            if x != r and (r, x) not in have:
                extra.append((r, x))
                have |= {(r, x), (x, r)}
    return extra


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


def _check_keys(name: str, spec: dict) -> None:
    """A setting of another kind (e.g. dir: on an embedding method) is a mistake, not noise."""
    kind = get_kind(spec["kind"])
    for key in spec:
        if key not in kind.accepts:
            owners = [k for k, other in KINDS.items() if key in other.accepts]
            raise InputError(
                f"config methods.{name}.{key}",
                f"{key!r} is a setting of kind {' or '.join(owners)}, not of {kind.name}",
                f"Remove {key}: from {name}, or set kind: to {owners[0]}",
            )


def _did_you_mean(word: str, choices) -> str:
    """' (did you mean 'x'?)' for the closest of `choices` (difflib), or ''."""
    folded = {str(c).casefold(): c for c in choices}  # 'A' for 'a' is a near miss too
    close = difflib.get_close_matches(str(word).casefold(), list(folded), n=1, cutoff=0.6)
    return f" (did you mean {folded[close[0]]!r}?)" if close else ""


def _unknown_kind(name: str, kind) -> None:
    """A method without a kind that its name does not give, or with a kind that is not one."""
    from themesim.kinds import DEFAULT_METHODS

    kinds = ", ".join(KINDS)
    if kind is None:
        raise InputError(
            f"config methods.{name}",
            f"has no kind: and {name!r} is not a built-in method name"
            f"{_did_you_mean(name, DEFAULT_METHODS)}, so its kind is unknown",
            f"Add kind: (one of {kinds}), or use a built-in method name "
            f"({', '.join(DEFAULT_METHODS)})",
        )
    raise InputError(
        f"config methods.{name}.kind",
        f"unknown kind {kind!r}{_did_you_mean(kind, KINDS)}",
        f"Use one of {kinds}",
    )


def _methods(config: dict) -> dict[str, dict]:
    methods = {}
    for name, spec in (config.get("methods") or {}).items():
        spec = method_defaults(name, spec or {})
        if not spec.get("active", True):
            continue
        where = f"config methods.{name}"
        if not METHOD_NAME.fullmatch(name):
            raise InputError(where, "method name has unusable characters", "Rename the method")
        if spec.get("kind") not in KINDS:
            _unknown_kind(name, spec.get("kind"))
        if not spec.get("thresholds"):
            raise InputError(where, "has no thresholds", "Give thresholds: [0.5] or a list")
        _check_keys(name, spec)
        _check_thresholds(name, spec)
        if "calibrated" in spec["thresholds"] or spec.get("scale") == "calibrated":
            _check_calibrated(name, spec, config)
        if spec.get("scale") == "z" and not get_kind(spec["kind"]).within_set_matrices:
            raise InputError(
                f"{where}.scale",
                f"scale z needs within-set similarities, which a {spec['kind']} method lacks",
                "Use scale: cosine for this method",
            )
        get_kind(spec["kind"]).check(name, spec)
        methods[name] = spec
    for name, spec in methods.items():
        get_kind(spec["kind"]).check_study(name, spec, methods)
    if not methods:
        raise InputError("config methods", "no method is active", "Set active: true on one")
    return methods


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
    import os

    try:
        return int(os.pathconf(".", "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255


def _short(name: str, keep: int = 24) -> str:
    return name if len(name) <= 2 * keep + 1 else f"{name[:keep]}…{name[-keep:]}"


def _longest(name: str, templates) -> str:
    from themesim.io.files import written_names

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


def _check_name_lengths(config: dict, study: Study) -> None:
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
    from themesim.archive.build import archive_name

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


def _restricted(study: Study) -> dict[str, list[tuple[str, str]]]:
    """Methods whose `comparisons:` names fewer than all the study's comparisons."""
    from themesim.comparisons import method_pairs

    out = {}
    for m, spec in study.methods.items():
        pairs = method_pairs(m, spec.get("comparisons"), study.sets, study.pairs)
        if pairs != study.pairs:
            out[m] = pairs
    return out


def prepare(config: dict) -> Study:
    """Check the config beyond its schema and work out the sets and comparisons."""
    sets = _set_entries(config)
    transcripts = _transcripts(config)
    projects = [] if transcripts else [p for p in sets.values() if p.lower().endswith(".qdpx")]
    if projects:  # issue 12: the sources' text becomes the transcripts when none are given
        from themesim.io.refi_qda import source_transcripts

        transcripts = source_transcripts(projects)
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
            f"{reference!r} is not one of the theme sets {sorted(sets)}"
            f"{_did_you_mean(reference, sets)}",
            "Name the reference set by its set name (the file stem unless name: is given)",
        )
    sets = {reference: sets[reference], **{k: v for k, v in sets.items() if k != reference}}
    names = list(sets)
    if (config.get("comparisons") or {}).get("all_pairs"):
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    else:
        pairs = [(reference, b) for b in names[1:]]
    study_cfg = section_defaults("study") | (config.get("study") or {})
    study = Study(
        name=study_cfg["name"],
        description=study_cfg["description"],
        reference=reference,
        sets=sets,
        transcripts=transcripts,
        template=config.get("text_template", default("text_template")),
        op=config.get("op", default("op")),
        sweep=_check_sweep(config.get("sweep") or {}),
        methods=_methods(config),
        metrics=metrics_settings(config.get("metrics")),
        pairs=pairs,
        generated=generated,
        generate=generate,
    )
    study.segments, study.levels = _set_segments(config, sets)
    study.users = _set_users(config, sets, study.segments)
    study.grounding = GROUNDING_DEFAULTS | (config.get("grounding") or {})
    study.grounding["coder"] = coder_settings(study.grounding)  # nested defaults filled in
    study.grounding["basis"] = bases(study.grounding)
    study.run_groups = _run_groups(config, sets, generated)
    study.ceiling = _ceiling(config)
    study.transcript_projects = projects if transcripts else []
    study.reference_group = _reference_group(config, sets, reference)
    _check_groups(study.reference_group, study.run_groups)
    study.pairs = study.pairs + analyst_pairs(study.pairs, names, study.reference_group)
    study.restricted = _restricted(study)
    study.equivalence = equivalence_settings(config.get("equivalence"))
    for m, spec in study.methods.items():
        get_kind(spec["kind"]).check_pairs(m, spec, study.pairs_for(m))
    _check_name_lengths(config, study)
    return study
