"""How the `themesim` commands write a table: JSON records, CSV or text blocks."""

from __future__ import annotations

import io
import json
import math

from themesim.report.format import fmt_threshold
from themesim.report.textblock import format_text_block

FORMATS = ("json", "csv", "text")


def _json_value(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def records(table) -> list[dict]:
    return [
        {k: _json_value(v.item() if hasattr(v, "item") else v) for k, v in row.items()}
        for row in table.to_dict(orient="records")
    ]


def render(table, fmt: str, op: str) -> str:
    if fmt == "json":
        return json.dumps(records(table), indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        table.to_csv(buf, index=False, lineterminator="\n")
        return buf.getvalue()
    blocks = [format_text_block(r, fmt_threshold(r["threshold"], op)) for r in records(table)]
    return "\n\n".join(blocks) + "\n"
