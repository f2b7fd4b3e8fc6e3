"""The metric CSVs the report reads: their columns, reading them, row order; text output."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from themesim.errors import InputError
from themesim.io.files import atomic_path
from themesim.metrics import columns

# The tables' columns, as the metrics job writes them (metrics/columns.py).
COMPARISON_COLUMNS = columns.COMPARISON_COLUMNS
THEME_COLUMNS = columns.THEME_COLUMNS
TEXT_COLUMNS = (
    "method",
    "set_a",
    "set_b",
    "op",
    "threshold_source",
    "scale_flag",
    "ci_method",
    "contract",
)
THEME_TEXT_COLUMNS = (*(c for c in THEME_COLUMNS if not c.endswith("similarity")), "category")


def _need_file(path, what: str) -> Path:
    if path is None or str(path) == "":
        raise FileNotFoundError(f"{what}: no path given")
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{what} not found: {p}")
    return p


def read_table(
    path, what: str, columns: Sequence[str], text_columns: Sequence[str]
) -> pd.DataFrame:
    p = _need_file(path, what)
    # All as text first, so theme names like "NA" or "None" stay names.
    df = pd.read_csv(p, dtype=str, keep_default_na=False, encoding="utf-8")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(
            str(p),
            f"{what} lacks column(s) {', '.join(missing)}",
            "Regenerate it with the themesim pipeline of the same version.",
        )
    # One frame built at once: replacing ~160 columns one by one left one block per column
    # (a "highly fragmented" PerformanceWarning from the report's next insert). An empty
    # cell is NaN as any text that is no number is ("coerce").
    return pd.DataFrame(
        {
            c: df[c] if c in text_columns else pd.to_numeric(df[c], errors="coerce")
            for c in df.columns
        },
        index=df.index,
    )


def only_method(df: pd.DataFrame, method: str, path, what: str) -> pd.DataFrame:
    """Keep the method's rows: a table of another method must never be mixed in."""
    if "method" not in df.columns or df.empty:
        return df
    mine = df[df["method"] == method]
    if mine.empty:
        found = ", ".join(sorted(set(df["method"]))) or "none"
        raise InputError(
            str(path),
            f"{what} has no rows for method {method!r} (methods found: {found})",
            "Pass the file written for this method.",
        )
    return mine


def comparison_pairs(df: pd.DataFrame) -> list[tuple[str, str]]:
    return list(dict.fromkeys(zip(df["set_a"], df["set_b"], strict=True)))


def sorted_records(comp: pd.DataFrame) -> list[dict]:
    """Rows in order of first appearance of each comparison, then by threshold."""
    order = {c: i for i, c in enumerate(comparison_pairs(comp))}
    comp = comp.assign(_order=[order[k] for k in zip(comp["set_a"], comp["set_b"], strict=True)])
    return (
        comp.sort_values(["_order", "threshold"], kind="stable")
        .drop(columns="_order")
        .to_dict("records")
    )


def write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
