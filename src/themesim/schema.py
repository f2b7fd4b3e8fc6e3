"""The config's JSON schema: read once, Snakemake's --config text read as the schema's types,
and one check with a one-line error naming the key."""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from pathlib import Path

import jsonschema
from jsonschema import validators

from themesim.defaults import SCHEMA_PATH, parse_yaml
from themesim.defaults import schema as workflow_schema
from themesim.errors import InputError, did_you_mean


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
    values given on the command line (`cli`: the --configfile files and --config, which reach
    the Snakefile as one) are touched: a number quoted in the workflow's own config file stays
    an error ("remove the quotes"); one quoted in a --configfile file is read, with the note.
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
                    f"config {_key_path(path)}: {merged!r} from the command line read as "
                    f"{json.dumps(value)} "
                    "(Snakemake's --config passes nested values as text)"
                )
                return value
        return merged

    for key, value in dict(cli or {}).items():
        if key in config:
            config[key] = walk(value, config[key], _schema_at(schema, key), [key])
    return notes


# Appended to a schema error in a value given on the command line.
CLI_HINT = (
    " (The value was given on the command line. If it came from --config, which passes "
    "nested values as text, write it in a YAML file and add it with --configfile, e.g. "
    "`snakemake --cores 8 --configfile config/config.yaml overrides.yaml`.)"
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
    its config at parse time). cli: the values given on the command line (--configfile and
    --config); an error inside one says how to give it instead.
    """
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
            raise InputError(
                f"{where}.{key}" if where != "config" else f"config {key}",
                f"unknown key{did_you_mean(key, allowed)}",
                f"Fix the spelling (accepted here: {', '.join(allowed)}); "
                "every key is described in config/README.md",
            )
    raise InputError(where, *_problem(error))


def _problem(error) -> tuple[str, str]:
    """What is wrong with the value at the schema error's key, and what to do."""
    given, wanted = error.instance, error.validator_value
    if error.validator == "enum":
        hint = did_you_mean(given, wanted)
        return f"{given!r} is not allowed{hint}", f"Use one of {', '.join(map(str, wanted))}"
    if error.validator == "minItems":
        return (
            f"has {len(given)} item(s) but needs at least {wanted}",
            f"List at least {wanted} (see config/README.md)",
        )
    if error.validator == "type":
        want = " or ".join(wanted) if isinstance(wanted, list) else wanted
        example = {"array": "a list, e.g. [0.5]", "object": "a mapping of keys"}.get(want, want)
        if isinstance(given, str) and {"number", "integer"} & set(want.split(" or ")):
            try:
                number = float(given)
            except ValueError:
                number = None
            mantissa, _, exponent = given.strip().lower().partition("e")
            if number is not None and exponent and "." not in mantissa:
                # YAML 1.1 (PyYAML) reads 1e-20, with no '.', as text
                return (
                    f"{given!r} is text, not a number (YAML reads e-notation "
                    "without a decimal point as text)",
                    f"Write it as {mantissa}.0e{exponent}",
                )
            if number is not None:
                return f"{given!r} is text, not a number", "Remove the quotes"
        return f"{given!r} is not of type {want}", f"Write it as {example}"
    if error.validator in ("anyOf", "oneOf"):
        accepted = []
        for branch in wanted:
            if "const" in branch:
                accepted.append(repr(branch["const"]))
            elif branch.get("type"):
                t = branch["type"]
                accepted.append(" or ".join(t) if isinstance(t, list) else f"a {t}")
        if accepted:
            return f"{given!r} is not {' or '.join(accepted)}", "See config/README.md for this key"
    return error.message, "See config/README.md for this key"
