"""What each set's themes were embedded or scored from (text_template over the ingested
theme tables): names only, or names with their descriptions; and the warning when the
reference and a compared set differ in kind, since that alone lowers every similarity."""

from __future__ import annotations

import statistics
from pathlib import Path

import pandas as pd

from themesim.report.format import as_text

NAMES_ONLY = "name only"
WITH_DESCRIPTION = "name + description"
# One line of config that scores every set from its names (config/config.yaml).
NAMES_CONFIG = 'text_template: "{name}"'
# mean words a theme beyond which two sets' texts differ in kind (a ratio of their means)
WORDS_RATIO = 3.0


def _kind(table: pd.DataFrame) -> str:
    """name only, name + description, or what the template gave (a mixture says its share)."""
    texts = [as_text(x).strip() for x in table["text"]]
    names = [as_text(x).strip() for x in table["name"]]
    same = sum(t == n for t, n in zip(texts, names, strict=True))
    if same == len(texts):
        return NAMES_ONLY
    described = sum(bool(as_text(d).strip()) for d in table["description"])
    if same == 0 and described == len(texts):
        return WITH_DESCRIPTION
    if same == 0:
        return "name + other fields"
    return f"mixed: {same} of {len(texts)} name only"


def compared_texts(theme_tables: dict, reference: str | None, template: str | None) -> dict | None:
    """{"rows": [[set, kind, themes, words a theme]], "warning": str, "pairs": {set: text}}
    from set -> its ingested table (results/themes/<set>.parquet); None without tables."""
    if not theme_tables:
        return None
    info = {}
    for s, path in theme_tables.items():
        if not path or not Path(path).is_file():
            continue
        t = pd.read_parquet(path, columns=["name", "description", "text"])
        if t.empty:
            continue
        words = [len(as_text(x).split()) for x in t["text"]]
        info[s] = {"kind": _kind(t), "n": len(t), "words": statistics.median(words)}
    if not info:
        return None
    rows = [[s, v["kind"], str(v["n"]), f"{v['words']:g}"] for s, v in info.items()]
    ref = info.get(reference or "")
    differ = {}
    if ref is not None:
        for s, v in info.items():
            if s == reference:
                continue
            lo, hi = sorted((max(ref["words"], 1), max(v["words"], 1)))
            if v["kind"] != ref["kind"] or hi / lo >= WORDS_RATIO:
                differ[s] = f"{reference}: {ref['kind']}; {s}: {v['kind']}"
    warning = ""
    if differ:
        sets = list(differ)
        kinds = sorted({info[s]["kind"] for s in sets})
        shown = ", ".join(sets[:4]) + (f" and {len(sets) - 4} more" if len(sets) > 4 else "")
        warning = (
            f"The sides differ in kind: {reference} is scored from {ref['kind']} (median "
            f"{ref['words']:g} words a theme), {shown} from {' or '.join(kinds)}. Texts of "
            "different kinds score lower for that alone, which can change every figure and "
            f"the advice. To compare names with names, set {NAMES_CONFIG} in the config."
        )
    return {
        "rows": rows,
        "warning": warning,
        "differ": differ,
        "template": template or "",
        "headers": ["Set", "Text compared", "Themes", "Words a theme (median)"],
    }
