"""The one place a default is written: workflow/schemas/config.schema.yaml.

A setting a config may leave out has its default there, as the key's `default:` (under
`methods:`, as its kind's entry in `x-kinds`), and nowhere else: the Python settings read it
from here (the DEFAULT_* dicts, the kinds' defaults, the LLM callers' dataclasses through
`schema_fields`). tests/test_defaults.py fails when one is written a second time.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from pathlib import Path

import yaml

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


def parse_yaml(path) -> dict:
    """A YAML file parsed with libyaml where PyYAML has it (about 8x pure Python's speed; the
    same values: the resolver is Python's in both)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=loader)


@functools.cache
def schema() -> dict:
    """The config schema, read once per process (do not modify it)."""
    if not SCHEMA_PATH.is_file():
        raise FileNotFoundError(
            f"{SCHEMA_PATH}: themesim reads its defaults from its repository's config schema; "
            "install it from a checkout of the repository (pip install -e .)"
        )
    return parse_yaml(SCHEMA_PATH)


def _node(path: tuple[str, ...]) -> dict:
    node = schema()
    for key in path:
        node = node["properties"][key]
    return node


def _defaults_of(node: dict) -> dict:
    out = {}
    for key, prop in node.get("properties", {}).items():
        if "default" in prop:
            out[key] = prop["default"]
        elif "properties" in prop and (inner := _defaults_of(prop)):
            out[key] = inner  # a section without a default of its own: its keys' defaults
    return out


def section_defaults(*path: str) -> dict:
    """key -> default of the properties of a schema section (path: its keys, e.g.
    "grounding", "coder", "llm"; none: the top level), in the schema's order; a property
    with no default of its own but keys with defaults gives those. A fresh copy each call."""
    return copy.deepcopy(_defaults_of(_node(path)))


def default(*path: str):
    """The `default:` of one key of the schema, e.g. default("ceiling") (a fresh copy)."""
    return copy.deepcopy(_node(path)["default"])


def kind_defaults(kind: str) -> dict:
    """key -> default of a method of this kind: the `x-kinds` entries under methods:."""
    method = schema()["properties"]["methods"]["additionalProperties"]["properties"]
    return copy.deepcopy(
        {key: p["x-kinds"][kind] for key, p in method.items() if kind in p.get("x-kinds", {})}
    )


def schema_fields(*path: str, kind: str | None = None):
    """Class decorator, under @dataclass: each field (its own or inherited) named in the
    schema section at `path` (or in kind `kind`'s x-kinds) gets the schema's default, a
    float field a float. A class that writes a value of its own for one is refused."""

    def wrap(cls):
        given = kind_defaults(kind) if kind else section_defaults(*path)
        own = dict(cls.__dict__.get("__annotations__", {}))
        inherited = {f.name: f.type for f in getattr(cls, "__dataclass_fields__", {}).values()}
        for name in [*own, *(n for n in inherited if n not in own)]:
            if name not in given:
                continue
            if name in cls.__dict__:
                raise TypeError(
                    f"{cls.__name__}.{name} has a default of its own; its default is the "
                    f"schema's ({SCHEMA_PATH.name})"
                )
            value = given[name]
            kind_of = own.get(name, inherited.get(name))
            if kind_of in ("float", float) and type(value) is int:
                value = float(value)
            own[name] = kind_of
            if isinstance(value, list | dict):
                value = dataclasses.field(default_factory=functools.partial(copy.deepcopy, value))
            setattr(cls, name, value)
        cls.__annotations__ = own
        return cls

    return wrap
