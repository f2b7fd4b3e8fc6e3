"""The summary report's page context: everything the templates show, as display-ready strings
(per-method views in ``views``, the opening paragraph in ``overview``, the cautions in
``cautions``)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from themesim.report.cautions import CAUTIONS_NONE, build_cautions, coder_checks, row_flags
from themesim.report.first_screen import PAGES_DIR, comparison_pages, first_screen
from themesim.report.format import DASH, flags_cell, fmt_int, image, relative_path
from themesim.report.glossary import GLOSSARY
from themesim.report.grounding_section import grounding_view
from themesim.report.overview import bound_summary, overview_paragraph
from themesim.report.texts import compared_texts
from themesim.report.verdicts import generators_view, verdict_view
from themesim.report.views import (
    CEILING_GLANCE,
    CEILING_NOTE,
    GLANCE_HEADERS,
    METHOD_TABLE,
    PARTNER_NOTE,
    THEME_EXTRA_HEADERS,
    THEME_HEADERS,
    interval_assumes,
    method_view,
    side_by_side_table,
)

# Section headings, shared by both templates (tests check them).
HEADINGS = {
    "answer": "The answer",
    "differ": "Where they differ",
    "compared": "What was compared",
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


@dataclass(frozen=True)
class ReportSources:
    """What a summary report is written from (report.summary.write_report's first
    argument): the study's names and paths, each method's tables, the input files, the
    transcripts, the models' provenance and the resolved config."""

    study: dict
    methods: dict
    inputs: list
    transcripts: dict
    provenance: dict
    config: dict


def build_context(
    sources: ReportSources, html_dir: Path, md_dir: Path, pages_dir: Path | None = None
) -> dict:
    study, methods, inputs = sources.study, sources.methods, sources.inputs
    transcripts, provenance, config = sources.transcripts, sources.provenance, sources.config
    method_views = _method_views(methods, html_dir, md_dir)
    # Shown only when the ceiling ran: some method's comparisons.csv has its columns.
    ceiling = any(m["ceiling"] for m in method_views)
    transcripts = transcripts or {}
    provenance = provenance or {}
    coder = coder_checks(methods)  # read once: the cautions and the verdict sentences
    cautions = build_cautions(methods, method_views, coder)
    texts = compared_texts(
        study.get("theme_tables") or {}, study.get("reference"), (config or {}).get("text_template")
    )
    pages = comparison_pages(
        method_views, pages_dir or Path(html_dir) / PAGES_DIR, html_dir, md_dir
    )
    top = first_screen(study, methods, method_views, cautions, texts, coder, pages)
    primary = top["primary_method"]
    return {
        "h": HEADINGS,
        "study": {
            "name": study.get("name") or "",
            "description": study.get("description") or "",
            "reference": study.get("reference") or "",
        },
        "headline": _headline_files(study, html_dir, md_dir),
        "verdicts": _verdicts_view(study.get("verdicts_csv"), html_dir, md_dir, coder, top),
        "answer": top["answer"],
        "differ": top["differ"],
        "texts": texts,
        "pages": pages,
        "glance_headers": GLANCE_HEADERS
        + ([h for h, _, _ in CEILING_GLANCE] if ceiling else [])
        + ["Interval assumes", "Flags"],
        # the primary method's rows of the reference's comparisons lead; the other methods'
        # and the other analysts' comparisons (each the reference in turn) are folded
        "glance_rows": _glance(method_views, ceiling, cautions, texts, True, primary),
        "glance_methods": _glance(method_views, ceiling, cautions, texts, True, primary, False),
        "glance_more": _glance(method_views, ceiling, cautions, texts, False),
        "primary_method": primary,
        "bound_notes": bound_summary(method_views),
        "limit_notes": [f"{m['name']}: {m['limits']}" for m in method_views if m["limits"]],
        "overview": overview_paragraph(study, method_views, transcripts, config),
        "cautions": cautions + top["cautions"],
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
        "methods_table": _methods_table(method_views),
        "side_by_side": image(study.get("side_by_side_png"), html_dir, md_dir),
        "intervals": image(study.get("intervals_png"), html_dir, md_dir),
        "inputs": _inputs_table(inputs),
        "transcripts": _transcripts_view(transcripts),
        "provenance": _provenance_view(provenance, method_views),
        "config_yaml": yaml.safe_dump(_plain(config or {}), sort_keys=False, allow_unicode=True),
        "grounding": _grounding_view(
            methods, html_dir, md_dir, bool(study.get("confidential")), primary
        ),
    }


def _method_views(methods: dict, html_dir: Path, md_dir: Path) -> list[dict]:
    """Each method's view (views.method_view), it and each of its comparisons with a unique
    anchor (none taken by a section heading)."""
    method_views = [method_view(name, spec, html_dir, md_dir) for name, spec in methods.items()]
    taken = {k.replace("_", "-") for k in HEADINGS}
    for m in method_views:
        m["anchor"] = _anchor(taken, "method", m["name"])
        for c in m["comparisons"]:
            c["anchor"] = _anchor(taken, m["name"], c["set_a"], "vs", c["set_b"])
    return method_views


def _headline_files(study: dict, html_dir: Path, md_dir: Path) -> dict:
    """The headline table's files (CSV, LaTeX) the study has, linked from both reports."""
    headline = {}
    for key in ("headline_csv", "headline_tex"):
        if study.get(key):
            headline[key] = {
                "html": relative_path(Path(study[key]), html_dir),
                "md": relative_path(Path(study[key]), md_dir),
            }
    return headline


def _methods_table(method_views: list[dict]) -> list[list]:
    """The Methods table: each method's kind, description, thresholds, rule and scale."""
    return [
        [
            m["name"],
            m["kind"] or DASH,
            m["description"] or DASH,
            m["thresholds"],
            m["op_text"],
            m["scale"] + (", clamped to [0, 1]" if m["clamp"] else ""),
        ]
        for m in method_views
    ]


def _inputs_table(inputs) -> list[list]:
    """The Inputs table: each input file, what it is, how many items and its sha256."""
    return [
        [
            str(i.get("path", "")),
            str(i.get("kind", "")),
            fmt_int(i.get("n_items")),
            str(i.get("sha256", "")),
        ]
        for i in inputs or []
    ]


def _transcripts_view(transcripts: dict) -> dict:
    """How many transcripts and segments, and each transcript's segments and speakers."""
    return {
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
    }


def _provenance_view(provenance: dict, method_views: list[dict]) -> dict:
    """The software, each model (a method without a model file of its own says what made
    its numbers) and the installed packages."""
    models = provenance.get("models") or {}
    return {
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


def _verdicts_view(path, html_dir: Path, md_dir: Path, coder=None, top=None):
    view = verdict_view(path, coder=coder)
    if view is not None:
        view["csv"] = {
            "html": relative_path(Path(path), html_dir),
            "md": relative_path(Path(path), md_dir),
        }
        view |= generators_view(top["verdicts"], coder, top["flags_of"])
        view["intro"] = VERDICTS_INTRO
    return view


VERDICTS_INTRO = (
    "Does each generator agree with the analysts as well as they agree with each other? Per "
    "generator its primary analysis (the answer above), the full sentence one click away, "
    "then every other method, threshold and route as a sensitivity analysis. Each method on "
    "its own, never pooled."
)


def _glance(
    method_views, ceiling: bool, cautions, texts, reference: bool, method=None, mine=True
) -> list[list]:
    """The at-a-glance rows of the reference's comparisons (or the others'), of `method`
    alone (mine) or of every other method (not mine; None: every method), each ending in
    its flags: every caution that touches the row, with its reconciled figure."""
    differ = (texts or {}).get("differ") or {}
    rows = []
    for m in method_views:
        if method is not None and (m["name"] == method) != mine:
            continue
        for row, cells, ref, r in zip(
            m["glance_rows"], m["ceiling_cells"], m["glance_reference"], m["shown_records"],
            strict=True,
        ):  # fmt: skip
            if ref != reference:
                continue
            flags = row_flags(cautions, m["name"], r["set_a"], r["set_b"])
            if r["set_b"] in differ or r["set_a"] in differ:
                flags.append({"text": "texts differ in kind", "href": "#flag-texts"})
            extra = [interval_assumes(r), flags_cell(flags)]
            rows.append(row + (cells if ceiling else []) + extra)
    return rows


def _grounding_view(
    methods, html_dir: Path, md_dir: Path, withhold_text: bool = False, primary=None
):
    view = grounding_view(methods, html_dir, md_dir, image, withhold_text)
    if view is not None:
        flags = view.get("reference_rows") or [True] * len(view["rows"])
        # a row whose data figures are all missing (a method whose coder labels nothing)
        # is folded with the other analysts' comparisons, and so are the other methods'
        # rows where the primary method has rows of its own
        mine = primary is not None and any(r[0] == primary for r in view["rows"])
        flags = [
            f and not _no_data(r) and (not mine or r[0] == primary)
            for r, f in zip(view["rows"], flags, strict=True)
        ]
        view["rows_main"] = [r for r, f in zip(view["rows"], flags, strict=True) if f]
        view["rows_more"] = [r for r, f in zip(view["rows"], flags, strict=True) if not f]
    return view


def _rebased(img, folder: Path):
    """A figure's links from another folder (a comparison's page)."""
    if not img:
        return img
    rel = relative_path(Path(img["path"]), folder)
    return img | {"rel_html": rel, "rel_md": rel}


def comparison_context(ctx: dict, page: dict, pages_dir: Path, out_html: Path, out_md: Path):
    """One comparison's page: every method's detail of it (text summary, heatmap, per-theme
    matches, what changed across thresholds) and, where grounding ran, its IoU heatmaps and
    passages; links back to the summaries and their glossary."""
    pages_dir = Path(pages_dir)
    key = (page["set_a"], page["set_b"])
    methods = []
    for m in ctx["methods"]:
        for c in m["comparisons"]:
            if (c["set_a"], c["set_b"]) == key:
                methods.append(
                    {
                        "name": m["name"],
                        "anchor": m["anchor"],
                        "limits": m["limits"],
                        "c": c | {"heatmap": _rebased(c["heatmap"], pages_dir)},
                    }
                )
    grounding = []
    for gm in (ctx.get("grounding") or {}).get("methods", []):
        for c in gm["comparisons"]:
            if c["title"] == page["title"]:
                grounding.append(
                    {
                        "method": gm["method"],
                        "c": c | {"heatmap": _rebased(c["heatmap"], pages_dir)},
                    }
                )
    differ = None
    for g in (ctx.get("differ") or {}).get("generators", []):
        if page["set_b"] in g["runs"] and page["set_a"] == ctx["study"]["reference"]:
            differ = g
    summary_html = relative_path(out_html, pages_dir)
    return {
        "h": ctx["h"],
        "study": ctx["study"],
        "page": page,
        "methods": methods,
        "grounding": grounding,
        "differ": differ,
        "differ_method": (ctx.get("differ") or {}).get("method", ""),
        "differ_theta": (ctx.get("differ") or {}).get("theta", ""),
        "theme_headers": ctx["theme_headers"],
        "partner_note": ctx["partner_note"],
        "summary_html": summary_html,
        "summary_md": relative_path(out_md, pages_dir),
        "gloss": summary_html,
    }
