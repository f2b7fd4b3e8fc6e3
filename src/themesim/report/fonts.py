"""Fallback fonts for plot text DejaVu Sans cannot draw (CJK names, emoji).

Matplotlib (3.6+) takes font.family as a fallback chain, glyph by glyph. Only installed
families are listed: a missing one would log "findfont: Font family ... not found".
`make fonts` installs Debian's fonts-wqy-microhei (CJK, 1.6 MB) and fonts-symbola (emoji).
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
from matplotlib import font_manager as fm

FALLBACK_FONTS = (
    "WenQuanYi Micro Hei",
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "Droid Sans Fallback",
    "Symbola",
)
_FILES = re.compile(r"wqy|NotoSansCJK|NotoSerifCJK|DroidSansFallback|Symbola", re.IGNORECASE)


def font_family() -> list[str]:
    """DejaVu Sans, then the installed fallback families in FALLBACK_FONTS order."""
    known = {f.name for f in fm.fontManager.ttflist}
    if not known & set(FALLBACK_FONTS):  # installed after matplotlib cached its font list
        for path in fm.findSystemFonts():
            if _FILES.search(Path(path).name):
                try:
                    fm.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue  # an unreadable font file: draw without it
        known = {f.name for f in fm.fontManager.ttflist}
    return ["DejaVu Sans", *(f for f in FALLBACK_FONTS if f in known)]


def use_fallback_fonts() -> None:
    matplotlib.rcParams["font.family"] = font_family()
