"""Read one set of themes from CSV/TSV, JSON/JSONL, YAML or Markdown.

Every reader yields the same table (see `theme_columns`), and every problem with
the file becomes an `InputError` naming the file, the row/line/key and a fix.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import logging
import re
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from themesim.errors import InputError
from themesim.io.files import atomic_path

TEXT_TEMPLATE_DEFAULT = "{name}: {description}"
THEME_SUFFIXES = (".csv", ".tsv", ".json", ".jsonl", ".yaml", ".yml", ".md", ".markdown")
TEMPLATE_FIELDS = ("name", "description", "keywords", "codes", "quotes", "id")
LIST_FIELDS = ("keywords", "codes", "quotes")

_COLUMNS = [
    "set",
    "theme_id",
    "name",
    "description",
    "keywords",
    "codes",
    "quotes",
    "text",
    "source_row",
]
_SCHEMA = pa.schema(
    [
        ("set", pa.string()),
        ("theme_id", pa.string()),
        ("name", pa.string()),
        ("description", pa.string()),
        ("keywords", pa.list_(pa.string())),
        ("codes", pa.list_(pa.string())),
        ("quotes", pa.list_(pa.string())),
        ("text", pa.string()),
        ("source_row", pa.int64()),
    ]
)
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
    "id or theme_id; name, theme, title or label (only one); description; keywords; codes; quotes"
)
_SET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
RESAVE_UTF8 = (
    "Re-save the file as UTF-8 (exports from Excel and other Windows tools are often "
    "latin-1/Windows-1252; in Excel use Save As > 'CSV UTF-8')."
)


def theme_columns() -> list[str]:
    """Columns of a theme table, in order."""
    return list(_COLUMNS)


# ---------------------------------------------------------------- file access


def check_input_file(path) -> Path:
    """The path as a Path, or an InputError if it is missing or a directory."""
    p = Path(path)
    if not p.exists():
        raise InputError(str(path), "file not found", "Check the path and the file name.")
    if p.is_dir():
        raise InputError(str(path), "is a directory, not a file", "Point to a file inside it.")
    return p


def read_text_file(path) -> str:
    """The file's text as UTF-8 (a leading BOM is dropped)."""
    p = check_input_file(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise InputError(
            str(path), f"cannot be read ({e.strerror})", "Check the file's permissions."
        ) from e
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError(str(path), "file is UTF-16 encoded, not UTF-8", RESAVE_UTF8)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError(
            str(path),
            f"file is not UTF-8: byte 0x{raw[e.start]:02X} at byte offset {e.start} "
            f"(line {line}) is not valid UTF-8",
            RESAVE_UTF8,
        ) from e


def split_lines(text: str) -> list[str]:
    # Not str.splitlines: it also splits on form feeds etc., which would shift line numbers.
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


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
class _Theme:
    row: int
    where: str
    id: str | None = None
    name: str = ""
    description: str = ""
    keywords: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    quotes: list[str] = field(default_factory=list)
    parent: str = ""  # the parent theme's name or id in an exported hierarchy


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


def _parse_csv(text: str, where: str, delimiter: str) -> tuple[list[_Theme], str]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
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
        t = _Theme(n, row_where)
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


def _from_mapping(obj, row: int, where: str) -> _Theme:
    if not isinstance(obj, dict):
        raise InputError(
            where,
            f"is a {_kind(obj)}, not a theme with keys",
            "Write each theme as an object/mapping with keys such as name and description.",
        )
    t = _Theme(row, where)
    for key, canon in _map_keys(obj.keys(), where, "key").items():
        value = obj[key]
        if canon == "_extra":
            continue
        if canon == "parent":
            t.parent = "" if value is None else str(value).strip()
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


def _parse_json(text: str, where: str) -> tuple[list[_Theme], str]:
    try:
        data = json.loads(text) if text.strip() else None
    except json.JSONDecodeError as e:
        raise InputError(
            f"{where}, line {e.lineno}, column {e.colno}",
            f"invalid JSON ({e.msg})",
            "Fix the syntax there; a missing comma or quote, or a trailing comma, is typical.",
        ) from e
    items = _theme_list(data, where)
    return [_from_mapping(o, i, f"{where}, theme {i}") for i, o in enumerate(items, 1)], "theme"


def _parse_jsonl(text: str, where: str) -> tuple[list[_Theme], str]:
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


def _parse_yaml(text: str, where: str) -> tuple[list[_Theme], str]:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
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


# ---------------------------------------------------------------- Markdown

_MD_H2 = re.compile(r"##(?:[ \t]+(.*))?")
_MD_HEADING = re.compile(r"#{1,6}(?:[ \t]+(.*))?")
_MD_BULLET = re.compile(r"(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)")
_MD_RULE = re.compile(r"([-*_])(?:[ \t]*\1){2,}")
_MD_FIELD = re.compile(
    r"(?:[-*+][ \t]+)?(?:\*\*|__)?(id|description|keywords|codes|quotes)(?:\*\*|__)?"
    r"[ \t]*:[ \t]*(?:\*\*|__)?[ \t]*(.*)",
    re.IGNORECASE,
)
_MD_BOLD_NAME = re.compile(r"(\*\*|__)(.+?)\1[ \t]*(?:[:\-–—][ \t]*)?(.*)")
# Earliest of "Name: ...", "Name - ...", "Name — ..." (a colon must be followed by a
# space so times and URLs stay whole).
_MD_NAME_SEP = re.compile(r":(?:[ \t]+|$)|[ \t]+[-–—][ \t]+|—")
_QUOTE_PAIRS = {'"': '"', "“": "”", "'": "'"}


def _unquote(item: str) -> str:
    item = item.strip()
    if len(item) >= 2 and _QUOTE_PAIRS.get(item[0]) == item[-1]:
        item = item[1:-1].strip()
    return item


def _md_items(value: str) -> list[str]:
    if ";" in value:
        parts = value.split(";")
    else:
        # csv keeps "a quote, with a comma" together when it is double-quoted.
        parts = next(csv.reader([value], skipinitialspace=True), [])
    return [u for u in (_unquote(p) for p in parts) if u]


def _clean_heading(text: str) -> str:
    text = re.sub(r"[ \t]+#+[ \t]*$", "", text or "").strip()
    if m := re.fullmatch(r"(\*\*|__)(.+)\1", text):
        text = m.group(2).strip()
    return text.rstrip(":").strip()


def _split_bullet(text: str) -> tuple[str, str]:
    if m := _MD_BOLD_NAME.fullmatch(text):
        return m.group(2).strip().rstrip(":").strip(), m.group(3).strip()
    if m := _MD_NAME_SEP.search(text):
        return text[: m.start()].strip(), text[m.end() :].strip()
    return text.strip(), ""


def _append(desc: str, text: str) -> str:
    return f"{desc} {text}" if desc else text


def _md_body(t: _Theme, text: str, pending: str | None) -> str | None:
    """Apply one stripped body line to t; return the list field still taking bullet items."""
    if pending and (m := _MD_BULLET.fullmatch(text)):
        if item := _unquote(m.group(1)):
            getattr(t, pending).append(item)
        return pending
    if m := _MD_FIELD.fullmatch(text):
        label, value = m.group(1).casefold(), m.group(2).strip()
        if label in LIST_FIELDS:
            getattr(t, label).extend(_md_items(value))
            return None if value else label
        if label == "id":
            t.id = value or None
        elif value:
            t.description = _append(t.description, value)
        return None
    t.description = _append(t.description, text)
    return None


def _parse_markdown(text: str, where: str) -> tuple[list[_Theme], str]:
    lines = split_lines(text)
    if any(_MD_H2.fullmatch(line) for line in lines):
        return _parse_md_headings(lines, where), "line"
    return _parse_md_bullets(lines, where), "line"


def _parse_md_headings(lines: list[str], where: str) -> list[_Theme]:
    themes: list[_Theme] = []
    t: _Theme | None = None
    pending = None
    for n, line in enumerate(lines, start=1):
        if m := _MD_H2.fullmatch(line):
            t = _Theme(n, f"{where}, line {n}", name=_clean_heading(m.group(1)))
            themes.append(t)
            pending = None
            continue
        text = line.strip()
        if t is None or not text or _MD_RULE.fullmatch(text):
            continue  # text before the first theme is preamble
        if m := _MD_HEADING.fullmatch(line):
            if line.startswith("# ") or line == "#":
                continue
            text = _clean_heading(m.group(1))  # a sub-heading's words belong to the theme
            if not text:
                continue
        pending = _md_body(t, text, pending)
    return themes


def _parse_md_bullets(lines: list[str], where: str) -> list[_Theme]:
    themes: list[_Theme] = []
    t: _Theme | None = None
    pending = None
    after_blank = False
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            after_blank = True
            continue
        if m := _MD_BULLET.fullmatch(line):
            name, desc = _split_bullet(m.group(1).strip())
            t = _Theme(n, f"{where}, line {n}", name=name, description=desc)
            themes.append(t)
            pending, after_blank = None, False
            continue
        indented = line[0] in " \t"
        text = line.strip()
        if t is None or (after_blank and not indented) or _MD_HEADING.fullmatch(line):
            t = None  # a heading or an unindented paragraph ends the list item
            continue
        after_blank = False
        if _MD_RULE.fullmatch(text):
            t = None
            continue
        pending = _md_body(t, text, pending)
    return themes


# ---------------------------------------------------------------- assembling

_PARSERS: dict[str, Callable[[str, str], tuple[list[_Theme], str]]] = {
    ".csv": lambda text, where: _parse_csv(text, where, ","),
    ".tsv": lambda text, where: _parse_csv(text, where, "\t"),
    ".json": _parse_json,
    ".jsonl": _parse_jsonl,
    ".yaml": _parse_yaml,
    ".yml": _parse_yaml,
    ".md": _parse_markdown,
    ".markdown": _parse_markdown,
}
_EMPTY_FIX = {
    ".csv": "Add one row per theme below the header.",
    ".tsv": "Add one row per theme below the header.",
    ".json": 'Give a list of themes, e.g. [{"name": "Trust", "description": "..."}].',
    ".jsonl": 'Write one theme per line, e.g. {"name": "Trust", "description": "..."}.',
    ".yaml": "Give a list of themes, e.g. '- name: Trust'.",
    ".yml": "Give a list of themes, e.g. '- name: Trust'.",
    ".md": "Start each theme with a '## Name' heading, or list them as '- Name: description'.",
    ".markdown": "Start each theme with a '## Name' heading, or list them as "
    "'- Name: description'.",
}


def check_set_name(name, where: str) -> None:
    """Set names become parts of file names and of the 'A__vs__B' pair names."""
    if not isinstance(name, str) or not _SET_NAME.fullmatch(name) or "__vs__" in name:
        raise InputError(
            where,
            f"theme set name {name!r} is not allowed (use letters, digits, '_', '.' and '-', "
            "starting with a letter or digit, and no '__vs__')",
            "Rename the file or set `name:` for this theme set in the config.",
        )


def check_text_template(template, source: str | None = None) -> None:
    """Reject templates that use fields a theme does not have (source: the theme file)."""
    where = (f"{source}, " if source else "") + f"text template {template!r}"
    if not isinstance(template, str):
        raise InputError(where, "is not text", "Give a template such as '{name}: {description}'.")
    try:
        used = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as e:
        raise InputError(
            where,
            f"is not a valid template ({e})",
            "Put field names in braces, e.g. '{name}: {description}'; write '{{' or '}}' "
            "for a literal brace.",
        ) from e
    accepted = ", ".join("{" + f + "}" for f in TEMPLATE_FIELDS)
    unknown = [f for f in used if f not in TEMPLATE_FIELDS]
    if unknown:
        raise InputError(
            where,
            "uses unknown field " + ", ".join("{" + f + "}" for f in unknown),
            f"Use only {accepted}.",
        )
    if not used:
        raise InputError(where, "uses no theme field", f"Use at least one of {accepted}.")


def _render(t: _Theme, template: str, source: str) -> str:
    fields = {"id": t.id, "name": t.name, "description": t.description}
    fields.update({f: ", ".join(getattr(t, f)) for f in LIST_FIELDS})
    try:
        text = template.format(**fields).strip()
    except (KeyError, IndexError, ValueError, AttributeError) as e:
        raise InputError(
            f"{source}, text template {template!r}",
            f"cannot be rendered for {t.where} ({e})",
            "Use plain fields such as '{name}: {description}' without format specs.",
        ) from e
    # "Name: " with an empty description (or other trailing field) should read "Name".
    if text.endswith(":") and not template.rstrip().endswith(":"):
        text = text[:-1].rstrip()
    return text


def _check_unique(themes: list[_Theme], key, what: str, noun: str, where: str) -> None:
    first: dict[str, _Theme] = {}
    for t in themes:
        k = key(t)
        if k in first:
            raise InputError(
                f"{where}, {noun}s {first[k].row} and {t.row}",
                f"duplicate theme {what} {getattr(t, what)!r}"
                + (" (names are compared ignoring case and spacing)" if what == "name" else ""),
                f"Theme {what}s must be unique in a set: rename or merge one of the two.",
            )
        first[k] = t


def _assemble(
    themes: list[_Theme], noun: str, where: str, suffix: str, set_name: str, template: str
) -> pd.DataFrame:
    if not themes:
        raise InputError(where, "contains no themes", _EMPTY_FIX[suffix])
    for t in themes:
        if not t.name:
            raise InputError(t.where, "theme has an empty name", "Give every theme a name.")
    with_id = [t for t in themes if t.id]
    if with_id and len(with_id) < len(themes):
        missing = next(t for t in themes if not t.id)
        raise InputError(
            missing.where,
            f"theme {missing.name!r} has no id while other themes have one",
            "Give every theme an id, or none (then T01, T02, ... are assigned in file order).",
        )
    if not with_id:
        width = max(2, len(str(len(themes))))
        for i, t in enumerate(themes, start=1):
            t.id = f"T{i:0{width}d}"
    _check_unique(themes, lambda t: t.id, "id", noun, where)
    _check_unique(themes, lambda t: " ".join(t.name.casefold().split()), "name", noun, where)
    texts = []
    for t in themes:
        text = _render(t, template, where)
        if not text:
            raise InputError(
                t.where,
                f"theme {t.name!r} has no text (the template {template!r} renders empty)",
                "Add a description, or use a template with more fields, "
                "e.g. '{name}: {description}'.",
            )
        texts.append(text)
    return pd.DataFrame(
        {
            "set": [set_name] * len(themes),
            "theme_id": [t.id for t in themes],
            "name": [t.name for t in themes],
            "description": [t.description for t in themes],
            "keywords": [t.keywords for t in themes],
            "codes": [t.codes for t in themes],
            "quotes": [t.quotes for t in themes],
            "text": texts,
            "source_row": pd.array([t.row for t in themes], dtype="int64"),
        },
        columns=_COLUMNS,
    )


def read_theme_file(
    path, set_name: str | None = None, text_template: str = TEXT_TEMPLATE_DEFAULT
) -> pd.DataFrame:
    """One theme set as a table with `theme_columns()`.

    `source_row` is the header-counted row for CSV/TSV, the line of the theme's
    heading/bullet/object for Markdown and JSONL, and the item number for JSON/YAML.
    """
    where = str(path)
    suffix = Path(path).suffix.lower()
    if suffix not in _PARSERS:
        raise InputError(
            where,
            f"unsupported theme file type {suffix or '(no extension)'!r}",
            f"Use one of: {', '.join(THEME_SUFFIXES)}.",
        )
    check_text_template(text_template, where)
    name = Path(path).stem if set_name is None else set_name
    check_set_name(name, where)
    themes, noun = _PARSERS[suffix](read_text_file(path), where)
    return _assemble(themes, noun, where, suffix, name, text_template)


# ---------------------------------------------------------------- parquet


def write_themes_parquet(df: pd.DataFrame, path) -> None:
    """Write a theme table; no pandas index or metadata, so equal tables give equal files."""
    missing = [c for c in _COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"theme table lacks columns {missing}")
    data = {c: df[c].tolist() for c in _COLUMNS}
    for c in LIST_FIELDS:
        data[c] = [list(v) for v in data[c]]
    with atomic_path(path) as tmp:
        pq.write_table(pa.Table.from_pydict(data, schema=_SCHEMA), tmp)


def read_checked_parquet(path, columns: list[str], what: str) -> pd.DataFrame:
    """The given columns of a parquet file themesim wrote; a clear error for anything else."""
    p = check_input_file(path)
    try:
        table = pq.read_table(str(p))
    except (pa.ArrowException, OSError) as e:
        raise InputError(
            str(path), f"is not a readable parquet file ({e})", "Re-create it with themesim."
        ) from e
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise InputError(
            str(path),
            f"is not a {what} table (missing columns {', '.join(missing)})",
            f"Point to a {what}s parquet file written by themesim.",
        )
    return table.select(columns).to_pandas()


def read_themes_parquet(path) -> pd.DataFrame:
    """Read a table written by `write_themes_parquet`; list columns come back as lists."""
    df = read_checked_parquet(path, _COLUMNS, "theme")
    for c in LIST_FIELDS:
        df[c] = [[] if v is None else list(v) for v in df[c]]
    return df
