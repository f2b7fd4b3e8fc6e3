"""Theme files as records, one parser per format: CSV/TSV, JSON, JSONL and YAML.

Each parser returns the themes in file order and the noun its positions use
("row", "theme", "line"); `themes.read_theme_file` checks and assembles them.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

import yaml

from themesim.errors import InputError
from themesim.io.inputs import csv_rows, parse_json, split_lines
from themesim.io.yaml_keys import load_unique

LIST_FIELDS = ("keywords", "codes", "quotes")

_ALIASES = {
    "id": "id",
    "theme_id": "id",
    "name": "name",
    "theme": "name",
    "title": "name",
    "label": "name",
    "description": "description",
    "keywords": "keywords",
    "codes": "codes",
    "quotes": "quotes",
    "group": "group",
    "domain": "group",
    "category": "group",
}
# Columns CAQDAS code-book exports carry beside the theme's own fields: `parent` is kept on the
# theme (its place in a hierarchy), the others are ignored with a warning.
_EXPORT_EXTRAS = {
    "parent": "parent",
    "colour": "_extra",
    "color": "_extra",
    "frequency": "_extra",
    "count": "_extra",
    "memo": "_extra",
    "created": "_extra",
    "modified": "_extra",
    "author": "_extra",
}
_ACCEPTED = (
    "id or theme_id; name, theme, title or label (only one); description; keywords; codes; "
    "quotes; group, domain or category (only one)"
)


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false value"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dt.date):
        return "date"
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list):
        return "list"
    return type(value).__name__


# ---------------------------------------------------------------- records


@dataclass
class ThemeRecord:
    row: int
    where: str
    id: str | None = None
    name: str = ""
    description: str = ""
    keywords: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    quotes: list[str] = field(default_factory=list)
    parent: str = ""  # the parent theme's name or id in an exported hierarchy
    group: str = ""  # the theme's declared group (a domain, parent theme or category)


def _split_items(value: str) -> list[str]:
    return [item.strip() for item in value.split(";") if item.strip()]


def _map_keys(keys: Iterable, where: str, what: str) -> dict:
    """Map each given column/key to its canonical field; reject unknown, doubled or no name."""
    mapping: dict = {}
    seen: dict[str, object] = {}
    unknown = []
    for key in keys:
        canon = _ALIASES.get(str(key).strip().casefold())
        extra = _EXPORT_EXTRAS.get(str(key).strip().casefold())
        if canon is None and extra is not None:
            if extra == "_extra":
                logging.getLogger("themesim").warning(
                    "%s: %s %r is not a theme field and is ignored", where, what, key
                )
            mapping[key] = extra
            continue
        if canon is None:
            unknown.append(key)
            continue
        if canon in seen:
            raise InputError(
                where,
                f"two {what}s give the theme {canon}: {seen[canon]!r} and {key!r}",
                "Keep only one of them.",
            )
        seen[canon] = key
        mapping[key] = canon
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        fix = f"Accepted {what}s (any case): {_ACCEPTED}. Rename or remove the others."
        if what == "column" and len(mapping) + len(unknown) == 1 and ";" in str(unknown[0]):
            fix = "The file looks semicolon-separated: save it with commas. " + fix
        raise InputError(where, f"unknown {what}{'s' if len(unknown) > 1 else ''} {names}", fix)
    if "name" not in seen:
        raise InputError(
            where,
            f"no name {what}",
            f"Add a {what} called name (or theme, title, label) holding each theme's name.",
        )
    return mapping


# ---------------------------------------------------------------- CSV / TSV


def parse_csv(text: str, where: str, delimiter: str) -> tuple[list[ThemeRecord], str]:
    reader = csv_rows(text, delimiter)  # a cell may be as long as the file (no 131,072 cap)
    try:
        records = list(reader)
    except csv.Error as e:
        raise InputError(
            f"{where}, line {reader.line_num}",
            f"malformed {'TSV' if delimiter == chr(9) else 'CSV'} ({e})",
            "A cell containing a quote or the separator must be wrapped in double quotes, "
            'with quotes inside it doubled ("").',
        ) from e
    numbered = [(n, r) for n, r in enumerate(records, start=1) if any(c.strip() for c in r)]
    if not numbered:
        raise InputError(
            where,
            "file is empty",
            "Add a header row (e.g. name,description) and one row per theme.",
        )
    header_row, header = numbered[0]
    named = {i: h for i, h in enumerate(header) if h.strip()}
    mapping = _map_keys(named.values(), f"{where}, row {header_row}", "column")
    themes = []
    for n, cells in numbered[1:]:
        row_where = f"{where}, row {n}"
        if len(cells) > len(header):
            raise InputError(
                row_where,
                f"has {len(cells)} cells but the header has {len(header)} columns",
                "Quote cells that contain the separator, or add a header for the extra column.",
            )
        t = ThemeRecord(n, row_where)
        for i, cell in enumerate(cells):
            if i not in named:
                if cell.strip():
                    raise InputError(
                        row_where,
                        f"value {cell.strip()!r} in column {i + 1}, which has no header",
                        "Give the column a header or delete it.",
                    )
                continue
            canon, value = mapping[named[i]], cell.strip()
            if canon == "_extra":
                continue
            if canon == "id":
                t.id = value or None
            elif canon in LIST_FIELDS:
                setattr(t, canon, _split_items(value))
            else:
                setattr(t, canon, value)
        themes.append(t)
    return themes, "row"


# ---------------------------------------------------------------- JSON / JSONL / YAML


def _id_value(value, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InputError(
        where, f"id is a {_kind(value)}, not text or a whole number", "Write the id as text."
    )


def _text_value(value, where: str, key: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    raise InputError(where, f"{key} is a {_kind(value)}, not text", "Put the value in quotes.")


def _list_value(value, where: str, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return _split_items(value)
    if not isinstance(value, list):
        raise InputError(
            where,
            f"{key} is a {_kind(value)}",
            f"Give {key} as a list of texts or as one text separated by ';'.",
        )
    items = []
    for i, item in enumerate(value, start=1):
        if isinstance(item, int) and not isinstance(item, bool):
            item = str(item)
        if not isinstance(item, str):
            raise InputError(
                where, f"{key} item {i} is a {_kind(item)}, not text", "Put the item in quotes."
            )
        if item.strip():
            items.append(item.strip())
    return items


def _from_mapping(obj, row: int, where: str) -> ThemeRecord:
    if not isinstance(obj, dict):
        raise InputError(
            where,
            f"is a {_kind(obj)}, not a theme with keys",
            "Write each theme as an object/mapping with keys such as name and description.",
        )
    t = ThemeRecord(row, where)
    for key, canon in _map_keys(obj.keys(), where, "key").items():
        value = obj[key]
        if canon == "_extra":
            continue
        if canon in ("parent", "group"):
            text = "" if value is None else str(value).strip()
            if canon == "group" and isinstance(value, dict | list):
                raise InputError(
                    where, f"group is a {_kind(value)}, not text", "Give the group as one text."
                )
            setattr(t, canon, text)
            continue
        if canon == "id":
            t.id = _id_value(value, where)
        elif canon in LIST_FIELDS:
            setattr(t, canon, _list_value(value, where, canon))
        else:
            setattr(t, canon, _text_value(value, where, canon))
    return t


def _theme_list(data, where: str):
    """The list of theme items from a top-level list or {themes: [...]}."""
    if isinstance(data, dict):
        keys = {str(k).strip().casefold(): k for k in data}
        if "themes" not in keys:
            raise InputError(
                where,
                "the top level is a mapping without a 'themes' key",
                "Make the file a list of themes, or put the list under the key 'themes'.",
            )
        extra = [k for k in data if str(k).strip().casefold() != "themes"]
        if extra:
            raise InputError(
                where,
                f"unknown top-level key{'s' if len(extra) > 1 else ''} "
                + ", ".join(repr(k) for k in extra),
                "Only 'themes' is accepted at the top level: remove the others.",
            )
        data = data[keys["themes"]]
    if data is None:
        return []
    if not isinstance(data, list):
        raise InputError(
            where,
            f"the themes are a {_kind(data)}, not a list",
            "Give the themes as a list, one item per theme.",
        )
    return data


def parse_json_themes(text: str, where: str) -> tuple[list[ThemeRecord], str]:
    data = parse_json(text, where, None)
    items = _theme_list(data, where)
    return [_from_mapping(o, i, f"{where}, theme {i}") for i, o in enumerate(items, 1)], "theme"


def parse_jsonl(text: str, where: str) -> tuple[list[ThemeRecord], str]:
    themes = []
    for n, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        line_where = f"{where}, line {n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(
                f"{line_where}, column {e.colno}",
                f"invalid JSON ({e.msg})",
                "Each line must be one complete JSON object, e.g. "
                '{"name": "Trust", "description": "..."}.',
            ) from e
        themes.append(_from_mapping(obj, n, line_where))
    return themes, "line"


def _yaml_item_lines(node) -> list[int]:
    """Line of each theme item, so messages can point into the file."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value.strip().casefold() == "themes":
                node = value
    if isinstance(node, yaml.SequenceNode):
        return [item.start_mark.line + 1 for item in node.value]
    return []


def parse_yaml(text: str, where: str) -> tuple[list[ThemeRecord], str]:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = load_unique(text, where)  # a key given twice is refused with both lines
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f"{where}, line {mark.line + 1}, column {mark.column + 1}" if mark else where
        raise InputError(
            at,
            f"invalid YAML ({getattr(e, 'problem', None) or e})",
            "Check the indentation, and quote values that contain ': ' or start with a "
            "special character such as '*', '&' or '['.",
        ) from e
    items = _theme_list(data, where)
    lines = _yaml_item_lines(node)
    themes = []
    for i, obj in enumerate(items, start=1):
        at = f"{where}, theme {i}" + (f" (line {lines[i - 1]})" if len(lines) == len(items) else "")
        themes.append(_from_mapping(obj, i, at))
    return themes, "theme"
