"""Markdown theme files: a theme per "## Name" heading, or per "- Name: description" bullet."""

from __future__ import annotations

import csv
import re

from themesim.io.inputs import split_lines
from themesim.io.theme_formats import (
    LIST_FIELDS,
    ThemeRecord,
)

_MD_H2 = re.compile(r"##(?:[ \t]+(.*))?")
_MD_HEADING = re.compile(r"#{1,6}(?:[ \t]+(.*))?")
_MD_BULLET = re.compile(r"(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)")
_MD_RULE = re.compile(r"([-*_])(?:[ \t]*\1){2,}")
_MD_FIELD = re.compile(
    r"(?:[-*+][ \t]+)?(?:\*\*|__)?(id|description|keywords|codes|quotes|group)(?:\*\*|__)?"
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


def _md_body(t: ThemeRecord, text: str, pending: str | None) -> str | None:
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
        elif label == "group":
            t.group = value
        elif value:
            t.description = _append(t.description, value)
        return None
    t.description = _append(t.description, text)
    return None


def parse_markdown(text: str, where: str) -> tuple[list[ThemeRecord], str]:
    lines = split_lines(text)
    if any(_MD_H2.fullmatch(line) for line in lines):
        return _parse_md_headings(lines, where), "line"
    return _parse_md_bullets(lines, where), "line"


def _parse_md_headings(lines: list[str], where: str) -> list[ThemeRecord]:
    themes: list[ThemeRecord] = []
    t: ThemeRecord | None = None
    pending = None
    for n, line in enumerate(lines, start=1):
        if m := _MD_H2.fullmatch(line):
            t = ThemeRecord(n, f"{where}, line {n}", name=_clean_heading(m.group(1)))
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


def _parse_md_bullets(lines: list[str], where: str) -> list[ThemeRecord]:
    themes: list[ThemeRecord] = []
    t: ThemeRecord | None = None
    pending = None
    after_blank = False
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            after_blank = True
            continue
        if m := _MD_BULLET.fullmatch(line):
            name, desc = _split_bullet(m.group(1).strip())
            t = ThemeRecord(n, f"{where}, line {n}", name=name, description=desc)
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
