"""The summary report's page context: everything the templates show, as display-ready strings
(per-method views in ``views``, the opening paragraph in ``overview``, the cautions in
``cautions``)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import yaml

from themesim.report.cautions import CAUTIONS_NONE, build_cautions, coder_checks
from themesim.report.format import DASH, fmt_int, image, relative_path
from themesim.report.glossary import GLOSSARY
from themesim.report.overview import bound_summary, overview_paragraph
from themesim.report.views import (
    CEILING_GLANCE,
    CEILING_NOTE,
    GLANCE_HEADERS,
    METHOD_TABLE,
    PARTNER_NOTE,
    THEME_EXTRA_HEADERS,
    THEME_HEADERS,
    method_view,
    side_by_side_table,
)

# Section headings, shared by both templates (tests check them).
HEADINGS = {
    "verdicts": "Verdicts",
    "cautions": "Where the figures disagree",
    "how_to_read": "What these numbers mean",
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


def build_context(
    study, methods, inputs, transcripts, provenance, config, html_dir: Path, md_dir: Path
) -> dict:
    method_views = [method_view(name, spec, html_dir, md_dir) for name, spec in methods.items()]
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
    coder = coder_checks(methods)  # read once: the cautions and the verdict sentences
    headline = {}
    for key in ("headline_csv", "headline_tex"):
        if study.get(key):
            headline[key] = {
                "html": relative_path(Path(study[key]), html_dir),
                "md": relative_path(Path(study[key]), md_dir),
            }
    return {
        "h": HEADINGS,
        "study": {
            "name": study.get("name") or "",
            "description": study.get("description") or "",
            "reference": study.get("reference") or "",
        },
        "headline": headline,
        "verdicts": _verdicts_view(study.get("verdicts_csv"), html_dir, md_dir, coder),
        "glance_headers": GLANCE_HEADERS + ([h for h, _, _ in CEILING_GLANCE] if ceiling else []),
        "glance_rows": [
            row + (cells if ceiling else [])
            for m in method_views
            for row, cells, ref in zip(
                m["glance_rows"], m["ceiling_cells"], m["glance_reference"], strict=True
            )
            if ref
        ],
        # the comparisons of the other analysts, each the reference in turn: folded
        "glance_more": [
            row + (cells if ceiling else [])
            for m in method_views
            for row, cells, ref in zip(
                m["glance_rows"], m["ceiling_cells"], m["glance_reference"], strict=True
            )
            if not ref
        ],
        "bound_notes": bound_summary(method_views),
        "limit_notes": [f"{m['name']}: {m['limits']}" for m in method_views if m["limits"]],
        "overview": overview_paragraph(study, method_views, transcripts, config),
        "cautions": build_cautions(methods, method_views, coder),
        "cautions_none": CAUTIONS_NONE,
        # the paraphrase ceiling's entry only when it ran (its columns are shown then)
        "glossary": [
            {"key": k, "term": t, "text": d} for k, t, d in GLOSSARY if ceiling or k != "ceiling"
        ],
        "ceiling_note": CEILING_NOTE if ceiling else "",
        "ran_on_notes": [m["ran_on_note"] for m in method_views if m["ran_on_note"]],
        "side_by_side_table": _split_side_by_side(
            side_by_side_table(method_views), study.get("reference")
        ),
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
        "side_by_side": image(study.get("side_by_side_png"), html_dir, md_dir),
        "intervals": image(study.get("intervals_png"), html_dir, md_dir),
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
            ]
            + (
                [["llama.cpp (llama-server --version)", str(provenance["llama_server"])]]
                if provenance.get("llama_server")
                else []
            ),
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
            ]
            + [
                [m["name"], NO_MODEL[m["kind"]], DASH, DASH, DASH, DASH]
                for m in method_views
                if m["name"] not in models and m["kind"] in NO_MODEL
            ]
            if models
            else [],
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


# The Models table's row of a method whose numbers no model file of its own made.
NO_MODEL = {
    "tfidf": "none: TF-IDF fitted on the two sets compared (scikit-learn, see the packages)",
    "abtt": "its base method's model (above), its vectors corrected (all-but-the-top)",
    "precomputed": "none recorded: scores made elsewhere (their files are among the inputs)",
}


def _split_side_by_side(table: dict, reference) -> dict:
    """The reference's comparisons in `rows_main`, the others (each analyst the reference in
    turn) in `rows_more`, folded in the HTML; `rows` keeps them all (Markdown)."""
    mine = [bool(not reference or str(r[0]).startswith(f"{reference} vs ")) for r in table["rows"]]
    return table | {
        "rows_main": [r for r, f in zip(table["rows"], mine, strict=True) if f],
        "rows_more": [r for r, f in zip(table["rows"], mine, strict=True) if not f],
    }


def _no_data(row: list[str]) -> bool:
    """A grounding row (grounding_section.HEADERS) with no data figure: every cell after the
    text Hungarian F1 a dash."""
    return all(str(c).replace("/", "").replace(" ", "") in ("—", "——", "") for c in row[4:])


def _verdicts_view(path, html_dir: Path, md_dir: Path, coder=None):
    from themesim.report.verdicts import verdict_view

    view = verdict_view(path, coder=coder)
    if view is not None:
        view["csv"] = {
            "html": relative_path(Path(path), html_dir),
            "md": relative_path(Path(path), md_dir),
        }
    return view


def _grounding_view(methods, html_dir: Path, md_dir: Path, withhold_text: bool = False):
    from themesim.report.grounding_section import grounding_view

    view = grounding_view(methods, html_dir, md_dir, image, withhold_text)
    if view is not None:
        flags = view.get("reference_rows") or [True] * len(view["rows"])
        # a row whose data figures are all missing (a method whose coder labels nothing)
        # is folded with the other analysts' comparisons
        flags = [f and not _no_data(r) for r, f in zip(view["rows"], flags, strict=True)]
        view["rows_main"] = [r for r, f in zip(view["rows"], flags, strict=True) if f]
        view["rows_more"] = [r for r, f in zip(view["rows"], flags, strict=True) if not f]
    return view
