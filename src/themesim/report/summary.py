"""The summary report: one self-contained HTML file and one Markdown file.

Everything shown is prepared as display-ready strings (here the page context; per-method
views in ``views``, number and Markdown formatting in ``format``, the metric CSVs read in
``tables``); the Jinja2 templates in ``templates/`` only lay it out. No timestamps are
written, so two runs on the same inputs give byte-identical files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import jinja2
import yaml

from themesim.report.format import (
    _NUMERIC,
    DASH,
    _defang_urls,
    _image,
    _md_fence,
    _md_link_target,
    _md_table,
    _md_text,
    _relpath,
    fmt_int,
)
from themesim.report.tables import _write
from themesim.report.views import (
    CEILING_GLANCE,
    CEILING_NOTE,
    GLANCE_HEADERS,
    METHOD_TABLE,
    PARTNER_NOTE,
    THEME_EXTRA_HEADERS,
    THEME_HEADERS,
    _method_view,
    _side_by_side_table,
)

TEMPLATES = Path(__file__).parent / "templates"

# Section headings, shared by both templates (tests check them).
HEADINGS = {
    "verdicts": "Verdicts",
    "how_to_read": "How to read this report",
    "at_a_glance": "At a glance",
    "side_by_side": "Methods side by side",
    "by_method": "Results by method",
    "inputs": "Inputs",
    "provenance": "Methods and provenance",
}


def _anchor(taken: set, *parts) -> str:
    """A unique HTML id from the parts (internal links only)."""
    base = re.sub(r"[^a-z0-9]+", "-", "-".join(map(str, parts)).lower()).strip("-") or "section"
    anchor, n = base, 2
    while anchor in taken:
        anchor, n = f"{base}-{n}", n + 1
    taken.add(anchor)
    return anchor


def _plain(obj):
    """Config to YAML-safe builtins (Paths, tuples, sets, numpy scalars)."""
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted(_plain(v) for v in obj)
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return obj.item()
    return obj


def _context(
    study, methods, inputs, transcripts, provenance, config, html_dir: Path, md_dir: Path
) -> dict:
    method_views = [_method_view(name, spec, html_dir, md_dir) for name, spec in methods.items()]
    taken = {k.replace("_", "-") for k in HEADINGS}
    for m in method_views:
        m["anchor"] = _anchor(taken, "method", m["name"])
        for c in m["comparisons"]:
            c["anchor"] = _anchor(taken, m["name"], c["set_a"], "vs", c["set_b"])
    # Shown only when the ceiling ran: some method's comparisons.csv has its columns.
    ceiling = any(m["ceiling"] for m in method_views)
    transcripts = transcripts or {}
    provenance = provenance or {}
    models = provenance.get("models") or {}
    headline = {}
    for key in ("headline_csv", "headline_tex"):
        if study.get(key):
            headline[key] = {
                "html": _relpath(Path(study[key]), html_dir),
                "md": _relpath(Path(study[key]), md_dir),
            }
    return {
        "h": HEADINGS,
        "study": {
            "name": study.get("name") or "",
            "description": study.get("description") or "",
            "reference": study.get("reference") or "",
        },
        "headline": headline,
        "verdicts": _verdicts_view(study.get("verdicts_csv"), html_dir, md_dir),
        "glance_headers": GLANCE_HEADERS + ([h for h, _, _ in CEILING_GLANCE] if ceiling else []),
        "glance_rows": [
            row + (cells if ceiling else [])
            for m in method_views
            for row, cells in zip(m["glance_rows"], m["ceiling_cells"], strict=True)
        ],
        "ceiling_note": CEILING_NOTE if ceiling else "",
        "ran_on_notes": [m["ran_on_note"] for m in method_views if m["ran_on_note"]],
        "side_by_side_table": _side_by_side_table(method_views),
        "method_headers": ["Comparison"] + [h for h, _ in METHOD_TABLE],
        "theme_headers": THEME_HEADERS + THEME_EXTRA_HEADERS,
        "partner_note": PARTNER_NOTE,
        "methods": method_views,
        "methods_table": [
            [
                m["name"],
                m["kind"] or DASH,
                m["description"] or DASH,
                m["thresholds"],
                m["op_text"],
                m["scale"] + (", clamped to [0, 1]" if m["clamp"] else ""),
            ]
            for m in method_views
        ],
        "side_by_side": _image(study.get("side_by_side_png"), html_dir, md_dir),
        "intervals": _image(study.get("intervals_png"), html_dir, md_dir),
        "inputs": [
            [
                str(i.get("path", "")),
                str(i.get("kind", "")),
                fmt_int(i.get("n_items")),
                str(i.get("sha256", "")),
            ]
            for i in inputs or []
        ],
        "transcripts": {
            "n_transcripts": int(transcripts.get("n_transcripts") or 0),
            "n_segments": int(transcripts.get("n_segments") or 0),
            "rows": [
                [
                    str(t.get("transcript", "")),
                    fmt_int(t.get("n_segments")),
                    ", ".join(map(str, t.get("speakers") or [])),
                ]
                for t in transcripts.get("per_transcript") or []
            ],
        },
        "provenance": {
            "software": [
                ["themesim version", str(provenance.get("themesim_version") or DASH)],
                ["git commit", str(provenance.get("git_commit") or "not recorded")],
                ["Python", str(provenance.get("python") or DASH)],
                ["generated by", str(provenance.get("generated_by") or DASH)],
            ],
            "models": [
                [
                    str(m),
                    str(v.get("model") or DASH),
                    str(v.get("source") or DASH),
                    str(v.get("package") or DASH),
                    str(v.get("package_version") or DASH),
                    str(v.get("files_sha256") or DASH),
                ]
                for m, v in models.items()
            ],
            "packages": [
                [str(k), str(v)]
                for k, v in sorted(
                    (provenance.get("packages") or {}).items(), key=lambda kv: str(kv[0]).lower()
                )
            ],
        },
        "config_yaml": yaml.safe_dump(_plain(config or {}), sort_keys=False, allow_unicode=True),
        "grounding": _grounding_view(methods, html_dir, md_dir, bool(study.get("confidential"))),
    }


def _verdicts_view(path, html_dir: Path, md_dir: Path):
    from themesim.report.verdicts import verdict_view

    view = verdict_view(path)
    if view is not None:
        view["csv"] = {"html": _relpath(Path(path), html_dir), "md": _relpath(Path(path), md_dir)}
    return view


def _grounding_view(methods, html_dir: Path, md_dir: Path, withhold_text: bool = False):
    from themesim.report.grounding_section import grounding_view

    return grounding_view(methods, html_dir, md_dir, _image, withhold_text)


# ---------------------------------------------------------------------------
# rendering


def _env(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["mdtext"] = _md_text
    env.globals["md_table"] = _md_table
    env.globals["md_fence"] = _md_fence
    env.filters["mdlink"] = _md_link_target
    env.tests["numeric"] = lambda v: bool(_NUMERIC.fullmatch(str(v)))
    return env


def write_report(
    *,
    out_html,
    out_md,
    study: dict,
    methods: dict[str, dict],
    inputs: list[dict],
    transcripts: dict,
    provenance: dict,
    config: dict,
) -> None:
    """Write the HTML (self-contained) and Markdown summary reports.

    Raises FileNotFoundError naming the path when a method's comparisons or
    themes CSV is missing; missing figures are noted in the report instead.
    """
    out_html, out_md = Path(out_html), Path(out_md)
    ctx = _context(
        study, methods, inputs, transcripts, provenance, config, out_html.parent, out_md.parent
    )
    html = _env(autoescape=True).get_template("summary.html.j2").render(**ctx)
    md = _env(autoescape=False).get_template("summary.md.j2").render(**ctx)
    _write(out_html, _defang_urls(html))
    _write(out_md, md)
