"""Read one set of themes from CSV/TSV, JSON/JSONL, YAML or Markdown.

Every reader yields the same table (see `theme_columns`), and every problem with
the file becomes an `InputError` naming the file, the row/line/key and a fix.
The per-format parsers live in `theme_formats` and `theme_markdown`; here the records are
checked (names, ids, template) and assembled, and theme tables go to and from parquet.
"""

from __future__ import annotations

import logging
import re
import string
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from themesim.defaults import default
from themesim.errors import InputError, name_key
from themesim.io.files import atomic_path
from themesim.io.inputs import read_checked_parquet, read_text_file
from themesim.io.theme_formats import (
    LIST_FIELDS,
    ThemeRecord,
    parse_csv,
    parse_json_themes,
    parse_jsonl,
    parse_yaml,
)
from themesim.io.theme_markdown import parse_markdown

log = logging.getLogger("themesim")

TEXT_TEMPLATE_DEFAULT = default("text_template")
THEME_SUFFIXES = (".csv", ".tsv", ".json", ".jsonl", ".yaml", ".yml", ".md", ".markdown")
TEMPLATE_FIELDS = ("name", "description", "keywords", "codes", "quotes", "id")

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
    "group",
]
# Written by every reader; tables written before `group` existed lack it (read as no group).
_REQUIRED = _COLUMNS[:-1]
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
        ("group", pa.string()),  # the theme's declared group; null where none
    ]
)
_SET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]*")  # '@': <set>@<user> of a .qdpx


def theme_columns() -> list[str]:
    """Columns of a theme table, in order."""
    return list(_COLUMNS)


# ---------------------------------------------------------------- assembling

_PARSERS: dict[str, Callable[[str, str], tuple[list[ThemeRecord], str]]] = {
    ".csv": lambda text, where: parse_csv(text, where, ","),
    ".tsv": lambda text, where: parse_csv(text, where, "\t"),
    ".json": parse_json_themes,
    ".jsonl": parse_jsonl,
    ".yaml": parse_yaml,
    ".yml": parse_yaml,
    ".md": parse_markdown,
    ".markdown": parse_markdown,
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
            f"theme set name {name!r} is not allowed (use letters, digits, '_', '.', '@' and '-', "
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


def _render(t: ThemeRecord, template: str, source: str) -> str:
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


def _check_unique(themes: list[ThemeRecord], key, what: str, noun: str, where: str) -> None:
    first: dict[str, ThemeRecord] = {}
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


def _note_group_spellings(themes: list[ThemeRecord], where: str) -> None:
    """One log line when the file spells one group two ways (`money`, `Money`): they are one
    group (theme_groups), said so that the spelling is not taken for two groups."""
    spellings: dict[str, list[str]] = {}
    for t in themes:
        label = _group_text(t.group or t.parent or None)
        if label is not None and label not in spellings.setdefault(name_key(label), []):
            spellings[name_key(label)].append(label)
    for labels in spellings.values():
        if len(labels) > 1:
            log.info(
                "%s: groups %s are one group (group labels are matched as theme names are, "
                "case and spacing ignored)",
                where,
                " and ".join(map(repr, labels)),
            )


def assemble(
    themes: list[ThemeRecord], noun: str, where: str, suffix: str, set_name: str, template: str
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
    _check_unique(themes, lambda t: name_key(t.name), "name", noun, where)
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
    _note_group_spellings(themes, where)
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
            # a declared group (a `group` column or field), else an exported hierarchy's
            # parent (CAQDAS code books, REFI-QDA parent codes); None where neither is given
            "group": pd.Series([(t.group or t.parent or None) for t in themes], dtype=object),
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
    return assemble(themes, noun, where, suffix, name, text_template)


# ---------------------------------------------------------------- parquet


def write_themes_parquet(df: pd.DataFrame, path) -> None:
    """Write a theme table; no pandas index or metadata, so equal tables give equal files."""
    missing = [c for c in _REQUIRED if c not in df.columns]
    if missing:
        raise ValueError(f"theme table lacks columns {missing}")
    data = {c: df[c].tolist() for c in _REQUIRED}
    data["group"] = [_group_text(g) for g in df["group"]] if "group" in df else [None] * len(df)
    for c in LIST_FIELDS:
        data[c] = [list(v) for v in data[c]]
    with atomic_path(path) as tmp:
        pq.write_table(pa.Table.from_pydict(data, schema=_SCHEMA), tmp)


def _group_text(value) -> str | None:
    """A declared group as text; None for a missing one (None, NaN, empty)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return str(value).strip() or None


def read_themes_parquet(path) -> pd.DataFrame:
    """Read a table written by `write_themes_parquet`; list columns come back as lists, and
    `group` is None for a theme without one (and for tables written before it existed)."""
    df = read_checked_parquet(path, _REQUIRED, "theme")
    for c in LIST_FIELDS:
        df[c] = [[] if v is None else list(v) for v in df[c]]
    names = pq.read_schema(str(path)).names
    df["group"] = (
        read_checked_parquet(path, ["group"], "theme")["group"] if "group" in names else None
    )
    df["group"] = df["group"].astype(object).where(df["group"].notna(), None)
    return df


def theme_groups(themes) -> dict[str, str | None]:
    """Each theme's declared group, as the group is matched: theme_id -> the label's
    name_key (None where the theme has none).

    A group is named as a theme is, so its label is matched as theme names are, case and
    spacing ignored: `Money` in one analyst's file and `money` in another's (or in two rows
    of one file) are one group, as a researcher means them, not two groups that would split
    one domain's themes into two units of the interval.

    themes: a theme table (read_theme_file, read_themes_parquet) or the path of an ingested
    theme table (results/themes/{set}.parquet). The one place other code gets groups from.
    """
    df = themes if isinstance(themes, pd.DataFrame) else read_themes_parquet(themes)
    groups = df["group"] if "group" in df else [None] * len(df)
    out = {}
    for i, g in zip(df["theme_id"], groups, strict=True):
        text = _group_text(g)
        out[str(i)] = None if text is None else name_key(text)
    return out
