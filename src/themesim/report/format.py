"""Formatting for the summary report: numbers, Markdown/HTML escaping, figure embedding.

Display-ready strings only; no file is read here except figures to embed.
"""

from __future__ import annotations

import base64
import io
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path

from PIL import Image

DASH = "–"  # shown for NaN / not applicable
# Each op's symbol as the report writes it and as LaTeX does (headline.tex).
OP_SYMBOL = {"ge": ("≥", r"$\geq$"), "gt": (">", "$>$")}


def is_missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def fmt(x, digits: int = 3) -> str:
    """3 decimals; NaN/None as an en dash."""
    if is_missing(x) or (isinstance(x, str) and not x.strip()):
        return DASH
    try:
        return f"{float(x):.{digits}f}"
    except (TypeError, ValueError):
        return str(x)


def fmt_int(x) -> str:
    return DASH if is_missing(x) else str(int(x))


def op_symbol(op: str) -> str:
    """'≥' for op "ge", '>' for "gt": the report's and the figures' one symbol."""
    try:
        return OP_SYMBOL[op][0]
    except KeyError:
        raise ValueError(f"op must be one of {tuple(OP_SYMBOL)}, got {op!r}") from None


def fmt_threshold(t, op: str | None = None, tex: bool = False) -> str:
    """θ as the report shows it ("≥ 0.56"); tex: the op in LaTeX ("$\\geq$ 0.56")."""
    t = f"{float(t):g}"
    return f"{OP_SYMBOL[op][tex]} {t}" if op in OP_SYMBOL else t


def as_text(x) -> str:
    return "" if is_missing(x) else str(x)


def theme_label(theme_id, name) -> str:
    theme_id, name = as_text(theme_id).strip(), as_text(name).strip()
    if theme_id and name and not name.startswith(theme_id):
        return f"{theme_id} {name}"
    return name or theme_id or DASH


# Markdown syntax in a name ("[click](x)", "*new*", "__init__") must show as typed.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]()!~#])")


def md_text(value) -> str:
    """User text in Markdown: no raw HTML, no link, emphasis or code syntax gets through."""
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_cell(value) -> str:
    """A Markdown table cell: pipes escaped, line breaks flattened."""
    return re.sub(r"\s*\n\s*", " ", md_text(value)).replace("|", r"\|")


# Cells to right-align: "0.667", "≥ 0.5", "12 / 9", "0.61–0.78", "–".
NUMERIC = re.compile(r"^(?:[≥>] )?-?\d+(?:\.\d+)?(?:(?: / |–)-?\d+(?:\.\d+)?)?$|^–$")
_URL_SCHEME = re.compile(r"(?i)\b(https?|ftp|wss?)://")


def defang_urls(html: str) -> str:
    # Keep the HTML free of any literal URL (self-contained, offline-safe):
    # the colon becomes an entity, so readers still see e.g. "https://…" as text.
    return _URL_SCHEME.sub(lambda m: f"{m.group(1)}&#58;//", html)


# Figures are embedded for the screen: EMBED_SCALE of their width as drawn (150 dpi, so an
# 8 pt label stays about 10 px high), but at least EMBED_MAX_WIDTH and at most EMBED_WIDE
# (the page's column is 72rem, about 1150 px), in a palette of EMBED_COLOURS colours. The
# demo's 95 embedded figures go from 21 MB as drawn (RGBA) to about 2.6 MB; the files beside
# the report keep every pixel (and an SVG each).
EMBED_MAX_WIDTH = 720
EMBED_WIDE = 1100
EMBED_SCALE = 0.6
EMBED_COLOURS = 32


def embed_width(width: int) -> int:
    """How wide a figure drawn `width` px wide is embedded (never wider than drawn)."""
    return min(width, max(EMBED_MAX_WIDTH, min(EMBED_WIDE, round(EMBED_SCALE * width))))


def _compact_png(data: bytes, max_width: int | None = None) -> bytes:
    """A PNG shrunk for embedding (flattened on white, `embed_width` wide unless max_width
    says otherwise, an EMBED_COLOURS palette, no dithering); the bytes as they are when
    they are not a PNG Pillow reads, or when the result would not be smaller.
    Deterministic: the same input gives the same bytes."""
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            if im.mode in ("RGBA", "LA", "P", "PA"):
                im = im.convert("RGBA")
                flat = Image.new("RGB", im.size, "white")
                flat.paste(im, mask=im.getchannel("A"))
                im = flat
            else:
                im = im.convert("RGB")
            width = embed_width(im.width) if max_width is None else max_width
            if im.width > width:
                height = max(1, round(im.height * width / im.width))
                im = im.resize((width, height), Image.Resampling.LANCZOS)
            im = im.quantize(
                colors=EMBED_COLOURS,
                method=Image.Quantize.FASTOCTREE,
                dither=Image.Dither.NONE,
            )
            out = io.BytesIO()
            im.save(out, "PNG", optimize=True)
    except Exception:  # not an image Pillow reads (a placeholder): embed it as it is
        return data
    small = out.getvalue()
    return small if len(small) < len(data) else data


def image(
    path, html_dir: Path, md_dir: Path, embed: bool = True, max_width: int | None = None
) -> dict | None:
    """A figure as data URI (HTML) and relative path (Markdown); None if not produced.

    The HTML embeds a copy shrunk for the screen (`_compact_png`); `rel_html` names the
    file beside the report, full size. embed=False: no data URI (the template names the
    file instead)."""
    if path is None or str(path) == "":
        return None
    p = Path(path)
    if not p.is_file():
        return None
    mime = {
        ".png": "image/png",
        ".svg": "image/svg+xml",
        ".jpg": "image/jpeg",
        ".jpeg": "image/jpeg",
    }.get(p.suffix.lower(), "application/octet-stream")
    data_uri = None
    if embed:
        data = p.read_bytes()
        if mime == "image/png":
            data = _compact_png(data, max_width)
        data_uri = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return {
        "path": str(p),
        "data_uri": data_uri,
        "rel_md": relative_path(p, md_dir),
        "rel_html": relative_path(p, html_dir),
    }


def relative_path(p: Path, start: Path) -> str:
    try:
        rel = os.path.relpath(p.resolve(), start.resolve())
    except ValueError:  # other drive on Windows
        rel = str(p.resolve())
    return rel.replace(os.sep, "/")


def md_table(headers: Sequence, rows: Sequence[Sequence]) -> str:
    """A GitHub-flavoured Markdown table (no trailing newline)."""
    lines = ["| " + " | ".join(_md_cell(h) for h in headers) + " |", "|" + " --- |" * len(headers)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def md_fence(text: str, lang: str = "") -> str:
    """A fenced code block whose fence is longer than any backtick run inside."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}"


def md_link_target(rel: str) -> str:
    return f"<{rel}>" if re.search(r"[\s()<>]", rel) else rel


class Linked(str):
    """A table cell with links (flags, pages): its text is what Markdown and tests read
    ("⚑ z rule keeps 0 of 6"); the HTML shows `lead`, then each (text, href) of `links`
    with the CSS class `cls`, joined by `sep`."""

    def __new__(cls, links, lead: str = "", css: str = "flag", sep: str = " ", plain=None):
        links = [(str(t), str(h)) for t, h in links]
        mark = "⚑ " if css == "flag" else ""
        text = plain if plain is not None else sep.join(f"{mark}{t}" for t, _ in links)
        cell = super().__new__(cls, (lead + sep if lead and text else lead) + text)
        cell.links, cell.lead, cell.cls, cell.sep = links, lead, css, sep
        return cell


def flags_cell(flags, lead: str = "") -> str:
    """A cell of flags ({"text", "href"} each) after `lead`; `lead` alone without flags."""
    flags = list(flags or [])
    if not flags:
        return lead or DASH
    return Linked([(f["text"], f["href"]) for f in flags], lead=lead)
