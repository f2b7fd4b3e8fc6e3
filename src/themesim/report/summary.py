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
    fmt,
    fmt_int,
    fmt_threshold,
)
from themesim.report.glossary import GLOSSARY, term_key
from themesim.report.tables import _write
from themesim.report.verdicts import CODER_TRUSTED
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
    coder = _coder_checks(methods)  # read once: the cautions and the verdict sentences
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
        "bound_notes": _bound_summary(method_views),
        "limit_notes": [f"{m['name']}: {m['limits']}" for m in method_views if m["limits"]],
        "overview": _overview(study, method_views, transcripts, config),
        "cautions": _cautions(methods, method_views, coder),
        "cautions_none": CAUTIONS_NONE,
        # the paraphrase ceiling's entry only when it ran (its columns are shown then)
        "glossary": [
            {"key": k, "term": t, "text": d} for k, t, d in GLOSSARY if ceiling or k != "ceiling"
        ],
        "ceiling_note": CEILING_NOTE if ceiling else "",
        "ran_on_notes": [m["ran_on_note"] for m in method_views if m["ran_on_note"]],
        "side_by_side_table": _split_side_by_side(
            _side_by_side_table(method_views), study.get("reference")
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


def _bound_summary(method_views: list[dict]) -> list[str]:
    """One note for every glance row whose interval is marked "(most possible)": the bound
    each pair of set sizes allows."""
    from themesim.report.views import _bound_note, f1_bound

    sizes = {}
    for m in method_views:
        for r in m["records"]:
            if _bound_note(r):
                n_a, n_b = int(r["n_a"]), int(r["n_b"])
                sizes[(n_a, n_b)] = f1_bound(n_a, n_b)
    if not sizes:
        return []
    bounds = [f"{fmt(v)} for {a} against {b} themes" for (a, b), v in sorted(sizes.items())]
    return [
        "An interval marked “(most possible)” ends at the largest Hungarian F1 the two "
        "sets' sizes allow, 2·min(n_A, n_B) / (n_A + n_B): "
        + "; ".join(bounds)
        + ". The sizes, not the method, keep it below 1: such an interval is cut at the "
        "bound, not a fault."
    ]


def _n_themes(method_views) -> dict:
    """set -> its theme count, from the comparisons' n_a / n_b."""
    sizes = {}
    for m in method_views:
        for r in m["records"]:
            sizes.setdefault(r["set_a"], fmt_int(r["n_a"]))
            sizes.setdefault(r["set_b"], fmt_int(r["n_b"]))
    return sizes


def _names(items) -> str:
    items = list(items)
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _overview(study: dict, method_views: list[dict], transcripts: dict | None, config) -> str:
    """One paragraph, in plain words: what was compared with what, and how."""
    config = config or {}
    reference = study.get("reference") or ""
    sizes = _n_themes(method_views)
    others = [f"{s} ({n})" for s, n in sizes.items() if s != reference]
    parts = []
    if reference and reference in sizes:
        parts.append(
            f"This report compares {len(sizes)} theme sets of the same interviews: the "
            f"reference {reference} ({sizes[reference]} themes) with {_names(others)}."
        )
    elif sizes:
        parts.append(f"This report compares {len(sizes)} theme sets: {_names(list(sizes))}.")
    group = [str(g) for g in config.get("reference_group") or []]
    if len(group) > 1:
        parts.append(
            f"{_names(group)} are analysts' sets of the same data (the reference group): how "
            "closely they agree with each other is the yardstick the verdicts hold every other "
            "set to."
        )
    runs = {str(k): list(v) for k, v in (config.get("run_groups") or {}).items()}
    for name, members in runs.items():
        parts.append(
            f"{_names([str(x) for x in members])} are repeated runs of one process "
            f"(run group {name})."
        )
    by_kind: dict[str, list[str]] = {}
    for m in method_views:
        by_kind.setdefault(m["kind_text"] or m["kind"] or "scores", []).append(m["name"])
    if by_kind:
        how = "; ".join(f"{_names(names)}: {text}" for text, names in by_kind.items())
        parts.append(
            f"Each method scores every theme of one set against every theme of the other "
            f"({how}), and a pair of themes matches when its score reaches the method's "
            "threshold θ. Themes are then paired one to one, each with at most one partner, to "
            "count how many of the reference's themes the other set has (Hungarian F1). Each "
            "method is read on its own scale, never averaged with another."
        )
    transcripts = transcripts or {}
    n_t, n_s = transcripts.get("n_transcripts") or 0, transcripts.get("n_segments") or 0
    if n_t:
        grounded = bool((config.get("grounding") or {}).get("active"))
        parts.append(
            f"The {n_t} transcript(s) ({n_s} segments) "
            + (
                "also test whether matched themes label the same passages of the data."
                if grounded
                else "give the theme-set quality figures their passages."
            )
        )
    return " ".join(parts)


CAUTIONS_NONE = (
    "No two figures point different ways: no method's raw one-to-one matches all fail the "
    "within-set z rule, no method calls more than 40 % of all theme pairs a match, and no "
    "automatic coder codes a human-coded set below moderate agreement (pooled κ 0.4)."
)
RAZA_ALMOST_ALL = 0.4  # share of all theme pairs at or above θ: the method matches nearly all


def _cautions(methods: dict, method_views: list[dict], coder=None) -> list[dict]:
    """Warnings where two signals disagree, each saying which figure to trust and why."""
    out = []
    for m in method_views:
        dec = m.get("decisions")
        frame = dec.get("frame") if dec else None
        if frame is not None and len(frame):
            rejected = frame[(frame["n_both"] == 0) & (frame["n_only_raw"] > 0)]
            if len(rejected):
                comps = [
                    f"{r['set_a']} vs {r['set_b']} ({fmt_int(r['n_only_raw'])})"
                    for r in rejected.to_dict("records")
                ]
                z = f"{float(rejected['z_threshold'].iloc[0]):g}"
                out.append(
                    {
                        "title": f"{m['name']}: every raw one-to-one match fails the within-set "
                        "z rule",
                        "text": f"In {_names(comps)} (raw matches in brackets), every "
                        f"Hungarian pair at or above raw θ {m['thresholds']} falls below z θ "
                        f"{z}: each pair is no more alike than the themes of one set are to "
                        "each other. Trust the within-set z decision (the raw-versus-z table "
                        "of this method): the raw similarity here reflects a shared topic and "
                        "vocabulary, so read these comparisons' raw Hungarian F1 as an upper "
                        "bound, not as agreement.",
                    }
                )
        flagged = [
            r
            for r in m["records"]
            if not _isnan_float(r.get("raza_jaccard"))
            and float(r["raza_jaccard"]) > RAZA_ALMOST_ALL
        ]
        if flagged:
            out.append(_almost_all(m, flagged, method_views))
    out += _coder_cautions(coder, methods)
    return out


def _almost_all(m: dict, flagged: list[dict], method_views: list[dict]) -> dict:
    """The warning for a method that calls most theme pairs a match (Raza Jaccard > 0.4)."""
    shares = [
        f"{100 * float(r['raza_jaccard']):.0f} % of the {fmt_int(r['n_a'])} × "
        f"{fmt_int(r['n_b'])} theme pairs of {r['set_a']} vs {r['set_b']} at θ "
        f"{fmt_threshold(r['threshold'], r.get('op'))}"
        for r in flagged
    ]
    first = flagged[0]
    alt = [
        f"{o['name']} {fmt(x['hungarian_f1'])}"
        for o in method_views
        if o["name"] != m["name"] and o["kind"] in ("sentence_transformer", "abtt")
        for x in o["records"]
        if (x["set_a"], x["set_b"]) == (first["set_a"], first["set_b"])
    ][:3]
    who = "the judge" if m["kind"] == "llm_judge" else m["name"]
    return {
        "title": f"{m['name']} matches almost every pair of themes",
        "text": f"{m['name']} calls {_names(shares[:4])}"
        + (f" (and {len(shares) - 4} more comparisons)" if len(shares) > 4 else "")
        + " a match (Raza Jaccard above 0.4). A method that matches almost everything cannot "
        f"tell themes apart, so the Hungarian F1 of {who} counts the one-to-one assignment, "
        "not agreement. Trust the embedding methods' figures for these comparisons"
        + (
            f" (Hungarian F1 of {first['set_a']} vs {first['set_b']}: {', '.join(alt)})"
            if alt
            else ""
        )
        + ", or calibrate the method on rated pairs (calibration.pairs, docs/thresholds.md) "
        "and read it on its calibrated scale.",
    }


def _isnan_float(x) -> bool:
    """None, NaN, an empty text or anything that is not a number."""
    try:
        return x is None or str(x).strip() == "" or float(x) != float(x)
    except (TypeError, ValueError):
        return True


CODER_AT_CHANCE = 0.1  # pooled κ below it, or an interval reaching 0: no better than chance


def _coder_checks(methods: dict):
    """The overall rows of coder_agreement.csv that checked the coder against a human
    coding (method, set, pooled κ and its interval), or None without that table."""
    paths = {str(s.get("coder_agreement_csv")) for s in methods.values()} - {"None", ""}
    paths = [p for p in sorted(paths) if Path(p).is_file()]
    if not paths:
        return None
    import pandas as pd

    t = pd.read_csv(paths[0])
    return t[(t["level"] == "overall") & (t["status"] == "checked")]


def _coder_cautions(t, methods: dict) -> list[dict]:
    """t: _coder_checks' rows (None without coder_agreement.csv)."""
    if t is None:
        return []
    t = t[t["method"].isin(list(methods))]
    out = []
    for r in t.to_dict("records"):
        kappa, low = r.get("pooled_kappa"), r.get("pooled_kappa_ci_low")
        if _isnan_float(kappa):
            continue
        at_chance = float(kappa) < CODER_AT_CHANCE or (not _isnan_float(low) and float(low) <= 0)
        if not at_chance and float(kappa) >= CODER_TRUSTED:
            continue
        ci = "" if _isnan_float(low) else f" [{fmt(low)}, {fmt(r.get('pooled_kappa_ci_high'))}]"
        how = "at chance" if at_chance else f"below moderate ({CODER_TRUSTED:g})"
        said = (
            "no better than chance"
            if at_chance
            else f"below the moderate {CODER_TRUSTED:g} a coder needs for its figures to "
            "measure the themes rather than itself"
        )
        out.append(
            {
                "title": f"{r['method']}: the coder codes {r['set']} {how}",
                "text": f"Against {r['set']}'s human coding the automatic coder ({r['coder']}) "
                f"reaches pooled κ {fmt(kappa)}{ci}, {said}. The data figures "
                f"of basis coder for {r['method']} (grounded Hungarian F1, AMI, κ of the text "
                "pairs) rest on this coder: trust the rows of basis evidence (the sets' own "
                "coding) and the text figures instead.",
            }
        )
    return out


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
        view["csv"] = {"html": _relpath(Path(path), html_dir), "md": _relpath(Path(path), md_dir)}
    return view


def _grounding_view(methods, html_dir: Path, md_dir: Path, withhold_text: bool = False):
    from themesim.report.grounding_section import grounding_view

    view = grounding_view(methods, html_dir, md_dir, _image, withhold_text)
    if view is not None:
        flags = view.get("reference_rows") or [True] * len(view["rows"])
        # a row whose data figures are all missing (a method whose coder labels nothing)
        # is folded with the other analysts' comparisons
        flags = [f and not _no_data(r) for r, f in zip(view["rows"], flags, strict=True)]
        view["rows_main"] = [r for r, f in zip(view["rows"], flags, strict=True) if f]
        view["rows_more"] = [r for r, f in zip(view["rows"], flags, strict=True) if not f]
    return view


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
    env.globals["term"] = term_key
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
