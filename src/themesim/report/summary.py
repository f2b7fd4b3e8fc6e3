"""The summary report: one self-contained HTML file and one Markdown file.

Everything shown is prepared here as display-ready strings; the Jinja2
templates in ``templates/`` only lay it out. No timestamps are written, so two
runs on the same inputs give byte-identical files.
"""

from __future__ import annotations

import base64
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import jinja2
import pandas as pd
import yaml

from themesim.errors import InputError
from themesim.io.files import atomic_path
from themesim.report.textblock import format_text_block

TEMPLATES = Path(__file__).parent / "templates"
DASH = "–"  # shown for NaN / not applicable

TEXT_COLUMNS = ("method", "set_a", "set_b", "op", "threshold_source", "scale_flag")
COMPARISON_COLUMNS = [
    "method", "set_a", "set_b", "threshold", "op", "n_a", "n_b", "n_match_pairs", "raza_jaccard",
    "hit_rate", "recall", "precision", "f1", "bidir_max_sim_a", "bidir_max_sim_b", "similarity_f1",
    "hungarian_n_matched", "hungarian_coverage_a", "hungarian_coverage_b", "hungarian_f1",
    "true_jaccard", "matched_sim_min", "matched_sim_q1", "matched_sim_median", "matched_sim_q3",
    "matched_sim_max", "maxcard_n_matched", "maxcard_coverage_a", "maxcard_coverage_b",
    "maxcard_f1", "maxcard_true_jaccard",
]  # fmt: skip
THEME_COLUMNS = [
    "method", "set_a", "set_b", "side", "theme_id", "theme_name", "best_match_id",
    "best_match_name", "best_similarity", "second_similarity", "hungarian_partner_id",
    "hungarian_partner_name", "hungarian_similarity",
]  # fmt: skip
THEME_TEXT_COLUMNS = (*(c for c in THEME_COLUMNS if not c.endswith("similarity")), "category")

# (header, column) of the per-method table: few enough columns for a phone.
METHOD_TABLE = [
    ("θ", None),
    ("A / B themes", None),
    ("One-to-one pairs", "hungarian_n_matched"),
    ("Hungarian F1", "hungarian_f1"),
    ("True Jaccard", "true_jaccard"),
    ("Coverage F1", "f1"),
    ("A covered (hit rate)", "hit_rate"),
    ("B covered (precision)", "precision"),
    ("Max-card. F1", "maxcard_f1"),
    ("Raza Jaccard (for comparison)", "raza_jaccard"),
]
GLANCE_HEADERS = [
    "Method",
    "Comparison",
    "θ",
    "Hungarian F1",
    "Hungarian F1 95 % CI",
    "Coverage F1",
    "Matched sim. median",
    "Matched sim. IQR (Q1–Q3)",
    "Hungarian coverage A",
    "Hungarian coverage B",
    "Raza Jaccard (for comparison)",
    "Significant match rate",
]
THEME_HEADERS = ["Theme", "Best match", "Best", "Second", "Hungarian partner", "Partner sim."]
OP_SYMBOL = {"ge": "≥", "gt": ">"}
PARTNER_NOTE = (
    "Hungarian partner: the theme's partner in the one-to-one assignment; "
    "the pair counts as matched only when its similarity meets the threshold θ."
)

# Section headings, shared by both templates (tests check them).
HEADINGS = {
    "how_to_read": "How to read this report",
    "at_a_glance": "At a glance",
    "side_by_side": "Methods side by side",
    "by_method": "Results by method",
    "inputs": "Inputs",
    "provenance": "Methods and provenance",
}
# Per-theme table: gap and category are optional (older themes.csv files lack them).
THEME_EXTRA_HEADERS = ["Gap", "Category"]
CATEGORY_TEXT = {
    "confident_unique": "confident unique",
    "ambiguous": "ambiguous",
    "clear_but_poor": "clear but poor",
    "no_good_match": "no good match",
}
# "What changed across thresholds": these metrics, read from the sweep.
CHANGE_METRICS = [
    ("Hungarian F1", "hungarian_f1"),
    ("Coverage F1", "f1"),
    ("True Jaccard", "true_jaccard"),
    ("A covered (hit rate)", "hit_rate"),
    ("B covered (precision)", "precision"),
    ("Raza Jaccard (for comparison)", "raza_jaccard"),
]
SETS_TABLE = [
    ("Set", "set"),
    ("Themes", "n_themes"),
    ("Coherence SC (mean)", "sc_mean"),
    ("Distinctiveness SD (mean)", "sd_mean"),
    ("SemDiv", "semdiv"),
    ("NPMI (mean)", "npmi_mean"),
]
# Raw-versus-z decision table (metrics.scales.decision_changes).
DECISIONS_TABLE = [
    ("A", "set_a"),
    ("B", "set_b"),
    ("Raw θ", "raw_threshold"),
    ("z θ", "z_threshold"),
    ("Both", "n_both"),
    ("Only raw", "n_only_raw"),
    ("Only z", "n_only_z"),
    ("Share changed", "share_changed"),
    ("Pairs only raw keeps", "only_raw_pairs"),
    ("Pairs only z keeps", "only_z_pairs"),
]
DECISIONS_TEXT = ("method", "set_a", "set_b", "only_raw_pairs", "only_z_pairs", "z_flag")
RUNS_TABLE = [
    ("Group", "group"),
    ("Run", "run"),
    ("NCS", "ncs"),
    ("Mean sim. to others", "mean_sim_to_others"),
    ("Min", "min_sim_to_other"),
    ("Max", "max_sim_to_other"),
]
# The headline table for a paper (CSV and LaTeX), in the seed's recommended order; the
# report's at-a-glance table shows exactly these rows.
HEADLINE_COLUMNS = [
    "method", "set_a", "set_b", "threshold", "op", "hungarian_f1", "f1", "matched_sim_median",
    "matched_sim_q1", "matched_sim_q3", "hungarian_coverage_a", "hungarian_coverage_b",
    "raza_jaccard", "hungarian_f1_ci_low", "hungarian_f1_ci_high", "significant_match_rate",
]  # fmt: skip


# ---------------------------------------------------------------------------
# formatting


def _isnan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def fmt(x, digits: int = 3) -> str:
    """3 decimals; NaN/None as an en dash."""
    if _isnan(x) or (isinstance(x, str) and not x.strip()):
        return DASH
    try:
        return f"{float(x):.{digits}f}"
    except (TypeError, ValueError):
        return str(x)


def fmt_int(x) -> str:
    return DASH if _isnan(x) else str(int(x))


def fmt_threshold(t, op: str | None = None) -> str:
    t = f"{float(t):g}"
    return f"{OP_SYMBOL[op]} {t}" if op in OP_SYMBOL else t


def _text(x) -> str:
    return "" if _isnan(x) else str(x)


def _label(theme_id, name) -> str:
    theme_id, name = _text(theme_id).strip(), _text(name).strip()
    if theme_id and name and not name.startswith(theme_id):
        return f"{theme_id} {name}"
    return name or theme_id or DASH


# Markdown syntax in a name ("[click](x)", "*new*", "__init__") must show as typed.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]()!~#])")


def _md_text(value) -> str:
    """User text in Markdown: no raw HTML, no link, emphasis or code syntax gets through."""
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_cell(value) -> str:
    """A Markdown table cell: pipes escaped, line breaks flattened."""
    return re.sub(r"\s*\n\s*", " ", _md_text(value)).replace("|", r"\|")


# Cells to right-align: "0.667", "≥ 0.5", "12 / 9", "0.61–0.78", "–".
_NUMERIC = re.compile(r"^(?:[≥>] )?-?\d+(?:\.\d+)?(?:(?: / |–)-?\d+(?:\.\d+)?)?$|^–$")
_URL_SCHEME = re.compile(r"(?i)\b(https?|ftp|wss?)://")


def _defang_urls(html: str) -> str:
    # Keep the HTML free of any literal URL (self-contained, offline-safe):
    # the colon becomes an entity, so readers still see e.g. "https://…" as text.
    return _URL_SCHEME.sub(lambda m: f"{m.group(1)}&#58;//", html)


# ---------------------------------------------------------------------------
# reading inputs


def _need_file(path, what: str) -> Path:
    if path is None or str(path) == "":
        raise FileNotFoundError(f"{what}: no path given")
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{what} not found: {p}")
    return p


def _read_table(
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
    for c in df.columns:
        if c not in text_columns:
            df[c] = pd.to_numeric(df[c].replace("", float("nan")), errors="coerce")
    return df


def _only_method(df: pd.DataFrame, method: str, path, what: str) -> pd.DataFrame:
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


def _comparisons(df: pd.DataFrame) -> list[tuple[str, str]]:
    return list(dict.fromkeys(zip(df["set_a"], df["set_b"], strict=True)))


def _image(path, html_dir: Path, md_dir: Path) -> dict | None:
    """A figure as data URI (HTML) and relative path (Markdown); None if not produced."""
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
    return {
        "data_uri": f"data:{mime};base64,{base64.b64encode(p.read_bytes()).decode('ascii')}",
        "rel_md": _relpath(p, md_dir),
    }


def _relpath(p: Path, start: Path) -> str:
    try:
        rel = os.path.relpath(p.resolve(), start.resolve())
    except ValueError:  # other drive on Windows
        rel = str(p.resolve())
    return rel.replace(os.sep, "/")


def _md_table(headers: Sequence, rows: Sequence[Sequence]) -> str:
    """A GitHub-flavoured Markdown table (no trailing newline)."""
    lines = ["| " + " | ".join(_md_cell(h) for h in headers) + " |", "|" + " --- |" * len(headers)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _md_fence(text: str, lang: str = "") -> str:
    """A fenced code block whose fence is longer than any backtick run inside."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}"


def _md_link_target(rel: str) -> str:
    return f"<{rel}>" if re.search(r"[\s()<>]", rel) else rel


# ---------------------------------------------------------------------------
# view model


def _glance_row(method: str, r: Mapping) -> list[str]:
    q1, q3 = r["matched_sim_q1"], r["matched_sim_q3"]
    iqr = DASH if _isnan(q1) or _isnan(q3) else f"{fmt(q1)}–{fmt(q3)}"
    return [
        method,
        f"{r['set_a']} vs {r['set_b']}",
        fmt_threshold(r["threshold"], r.get("op")),
        fmt(r["hungarian_f1"]),
        _interval(r.get("hungarian_f1_ci_low"), r.get("hungarian_f1_ci_high")),
        fmt(r["f1"]),
        fmt(r["matched_sim_median"]),
        iqr,
        fmt(r["hungarian_coverage_a"]),
        fmt(r["hungarian_coverage_b"]),
        fmt(r["raza_jaccard"]),
        fmt(r.get("significant_match_rate")),
    ]


def _interval(lo, hi) -> str:
    return DASH if _isnan(lo) or _isnan(hi) else f"{fmt(lo)}–{fmt(hi)}"


def _method_row(r: Mapping) -> list[str]:
    cells = []
    for _, col in METHOD_TABLE:
        if col is None:
            continue
        cells.append(fmt_int(r[col]) if col.endswith("_n_matched") else fmt(r[col]))
    return [
        f"{r['set_a']} vs {r['set_b']}",
        fmt_threshold(r["threshold"], r.get("op")),
        f"{fmt_int(r['n_a'])} / {fmt_int(r['n_b'])}",
        *cells,
    ]


def _theme_rows(themes: pd.DataFrame, side: str) -> list[list[str]]:
    rows = []
    for r in themes[themes["side"] == side].to_dict("records"):
        partner = _label(r["hungarian_partner_id"], r["hungarian_partner_name"])
        category = _text(r.get("category")).strip()
        rows.append(
            [
                _label(r["theme_id"], r["theme_name"]),
                _label(r["best_match_id"], r["best_match_name"]),
                fmt(r["best_similarity"]),
                fmt(r["second_similarity"]),
                partner,
                fmt(r["hungarian_similarity"]) if partner != DASH else DASH,
                fmt(r.get("gap_abs")),
                CATEGORY_TEXT.get(category, category) or DASH,
            ]
        )
    return rows


def _sorted_records(comp: pd.DataFrame) -> list[dict]:
    """Rows in order of first appearance of each comparison, then by threshold."""
    order = {c: i for i, c in enumerate(_comparisons(comp))}
    comp = comp.assign(_order=[order[k] for k in zip(comp["set_a"], comp["set_b"], strict=True)])
    return (
        comp.sort_values(["_order", "threshold"], kind="stable")
        .drop(columns="_order")
        .to_dict("records")
    )


def _threshold_changes(sweep: pd.DataFrame | None, rows: list[dict]) -> dict:
    """Per headline metric: value at each configured θ, and where the sweep keeps or loses it."""
    headers = ["Metric"] + [fmt_threshold(r["threshold"], r.get("op")) for r in rows]
    headers += ["Sweep maximum", "At its maximum up to θ", "Zero from θ"]
    if sweep is None or sweep.empty:
        return {"headers": headers[: 1 + len(rows)], "rows": [], "grid": ""}
    sweep = sweep.sort_values("threshold", kind="stable")
    t = sweep["threshold"].to_numpy(float)
    out = []
    for label, col in CHANGE_METRICS:
        v = sweep[col].to_numpy(float)
        finite = v[~pd.isna(v)]
        best = float(finite.max()) if finite.size else float("nan")
        # Largest θ still at the maximum; smallest θ from which the metric stays at 0.
        at_max = [x for x, y in zip(t, v, strict=True) if not _isnan(best) and y >= best - 1e-12]
        nonzero = [x for x, y in zip(t, v, strict=True) if not (y == 0)]
        zero_from = [x for x in t if not nonzero or x > max(nonzero)]
        out.append(
            [label]
            + [fmt(r[col]) for r in rows]
            + [
                fmt(best),
                fmt_threshold(at_max[-1]) if at_max else DASH,
                fmt_threshold(zero_from[0]) if zero_from else DASH,
            ]
        )
    step = f"{t[1] - t[0]:g}" if len(t) > 1 else DASH
    grid = f"θ from {t.min():g} to {t.max():g} (step {step}, {len(t)} values)"
    return {"headers": headers, "rows": out, "grid": grid}


def _optional_table(path, what: str, method: str, spec: list[tuple[str, str]], text_cols):
    """Rows of an optional per-method CSV (sets.csv, runs.csv); None when not produced."""
    if path is None or str(path) == "" or not Path(path).is_file():
        return None
    df = _read_table(path, what, [c for _, c in spec], text_cols)
    df = _only_method(df, method, path, what)
    rows = []
    for r in df.to_dict("records"):
        cells = []
        for _, col in spec:
            if col in text_cols:
                cells.append(_text(r[col]))
            elif col.startswith("n_"):
                cells.append(fmt_int(r[col]))
            else:
                cells.append(fmt(r[col]))
        rows.append(cells)
    return {"headers": [h for h, _ in spec], "rows": rows, "frame": df}


def _method_view(name: str, spec: Mapping, html_dir: Path, md_dir: Path) -> dict:
    comp_path = spec.get("comparisons_csv")
    themes_path = spec.get("themes_csv")
    comp = _read_table(
        comp_path, f"comparisons CSV of method {name!r}", COMPARISON_COLUMNS, TEXT_COLUMNS
    )
    comp = _only_method(comp, name, comp_path, "comparisons CSV")
    themes = _read_table(
        themes_path, f"themes CSV of method {name!r}", THEME_COLUMNS, THEME_TEXT_COLUMNS
    )
    themes = _only_method(themes, name, themes_path, "themes CSV")
    sweep = None
    sweep_path = spec.get("sweep_csv")
    if sweep_path and Path(sweep_path).is_file():
        sweep = _read_table(
            sweep_path, f"sweep CSV of method {name!r}", COMPARISON_COLUMNS, TEXT_COLUMNS
        )
        sweep = _only_method(sweep, name, sweep_path, "sweep CSV")

    records = _sorted_records(comp)
    heatmaps = spec.get("heatmaps") or {}

    comparisons = []
    for set_a, set_b in _comparisons(comp):
        rows = [r for r in records if (r["set_a"], r["set_b"]) == (set_a, set_b)]
        mine = themes[(themes["set_a"] == set_a) & (themes["set_b"] == set_b)]
        swept = (
            None if sweep is None else sweep[(sweep["set_a"] == set_a) & (sweep["set_b"] == set_b)]
        )
        comparisons.append(
            {
                "set_a": set_a,
                "set_b": set_b,
                "title": f"{set_a} vs {set_b}",
                "blocks": [
                    {
                        "threshold": fmt_threshold(r["threshold"], r.get("op")),
                        "text": format_text_block(r),
                    }
                    for r in rows
                ],
                "heatmap": _image(heatmaps.get(f"{set_a}__vs__{set_b}"), html_dir, md_dir),
                "themes_a": _theme_rows(mine, "a"),
                "themes_b": _theme_rows(mine, "b"),
                "changes": _threshold_changes(swept, rows),
            }
        )
    thresholds = spec.get("thresholds") or sorted(set(comp["threshold"]))
    calibrated: set[float] = set()
    if any(isinstance(t, str) for t in thresholds):  # `calibrated`: as the metrics resolved it
        thresholds = list(pd.unique(comp["threshold"]))
        if "threshold_source" in comp:
            mask = comp["threshold_source"].astype(str).str.startswith("calibrated")
            calibrated = set(comp.loc[mask, "threshold"].astype(float))
    op = spec.get("op") or (records[0]["op"] if records else "ge")
    sets = _optional_table(
        spec.get("sets_csv"), f"sets CSV of method {name!r}", name, SETS_TABLE, ("method", "set")
    )
    runs = _optional_table(
        spec.get("runs_csv"),
        f"runs CSV of method {name!r}",
        name,
        RUNS_TABLE,
        ("method", "group", "run"),
    )
    decisions = _optional_table(
        spec.get("decisions_csv"),
        f"decision-change CSV of method {name!r}",
        name,
        DECISIONS_TABLE,
        DECISIONS_TEXT,
    )
    runs_score = DASH
    if runs is not None and "run_consistency" in runs["frame"].columns and len(runs["frame"]):
        # one score per run group: runs are never compared across groups
        per_group = runs["frame"].drop_duplicates("group")
        runs_score = "; ".join(
            f"{g} {fmt(v)}"
            for g, v in zip(per_group["group"], per_group["run_consistency"], strict=True)
        )
    return {
        "name": name,
        "description": spec.get("description") or "",
        "kind": spec.get("kind") or "",
        "scale": spec.get("scale") or "cosine",
        "clamp": bool(spec.get("clamp", False)),
        "op": op,
        "op_text": f"a pair matches when S {OP_SYMBOL.get(op, op)} θ",
        "thresholds": ", ".join(
            f"{float(t):g}" + (" (calibrated)" if float(t) in calibrated else "")
            for t in thresholds
        ),
        "first_threshold": fmt_threshold(thresholds[0], op) if len(thresholds) else DASH,
        "first_theta": float(thresholds[0]) if len(thresholds) else None,
        "records": records,
        "table_rows": [_method_row(r) for r in records],
        "glance_rows": [_glance_row(name, r) for r in records],
        "comparisons": comparisons,
        "comparisons_csv_html": _relpath(Path(comp_path), html_dir),
        "comparisons_csv_md": _relpath(Path(comp_path), md_dir),
        "sweep": _image(spec.get("sweep_png"), html_dir, md_dir),
        "distributions": _image(spec.get("distributions_png"), html_dir, md_dir),
        "confidence": _image(spec.get("confidence_png"), html_dir, md_dir),
        "theme_map": _image(spec.get("theme_map_png"), html_dir, md_dir),
        "runs_plot": _image(spec.get("runs_png"), html_dir, md_dir),
        "sets": sets,
        "runs": runs,
        "runs_score": runs_score,
        "decisions": decisions if decisions is not None and decisions["rows"] else None,
    }


def _side_by_side_table(views: list[dict]) -> dict:
    """Rows = comparisons, columns = methods: Hungarian F1 at each method's first θ."""
    comps = list(dict.fromkeys((c["set_a"], c["set_b"]) for m in views for c in m["comparisons"]))
    headers = ["Comparison"] + [f"{m['name']} ({m['first_threshold']})" for m in views]
    rows = []
    for a, b in comps:
        cells = [f"{a} vs {b}"]
        for m in views:
            mine = [r for r in m["records"] if (r["set_a"], r["set_b"]) == (a, b)]
            at_first = [
                r
                for r in mine
                if m["first_theta"] is not None
                and math.isclose(float(r["threshold"]), m["first_theta"], abs_tol=1e-12)
            ]
            first = (at_first or mine or [None])[0]
            cells.append(DASH if first is None else fmt(first["hungarian_f1"]))
        rows.append(cells)
    return {"headers": headers, "rows": rows}


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
        "glance_headers": GLANCE_HEADERS,
        "glance_rows": [row for m in method_views for row in m["glance_rows"]],
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
        "grounding": _grounding_view(methods, html_dir, md_dir),
    }


def _grounding_view(methods, html_dir: Path, md_dir: Path):
    from themesim.report.grounding_section import grounding_view

    return grounding_view(methods, html_dir, md_dir, _image)


# ---------------------------------------------------------------------------
# headline table for a paper


def headline_frame(comparisons: Mapping[str, object]) -> pd.DataFrame:
    """HEADLINE_COLUMNS of every method's comparisons.csv, in the report's row order."""
    frames = []
    for method, path in comparisons.items():
        comp = _read_table(
            path, f"comparisons CSV of method {method!r}", COMPARISON_COLUMNS, TEXT_COLUMNS
        )
        comp = _only_method(comp, method, path, "comparisons CSV")
        records = _sorted_records(comp)
        # Without bootstrap or null model their columns are absent: NaN, never made up.
        frames.append(
            pd.DataFrame(records, columns=list(comp.columns)).reindex(columns=HEADLINE_COLUMNS)
        )
    if not frames:
        return pd.DataFrame(columns=HEADLINE_COLUMNS)
    return pd.concat(frames, ignore_index=True)


_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_TEX_RE = re.compile("|".join(re.escape(k) for k in _TEX_SPECIAL))


def tex_escape(text) -> str:
    """User text (method and set names) safe inside a LaTeX table cell."""
    return _TEX_RE.sub(lambda m: _TEX_SPECIAL[m.group(0)], str(text))


def _tex_num(x) -> str:
    return "--" if _isnan(x) else f"{float(x):.3f}"


def _tex_range(lo, hi) -> str:
    return "--" if _isnan(lo) or _isnan(hi) else f"{_tex_num(lo)}--{_tex_num(hi)}"


def headline_tex(df: pd.DataFrame) -> str:
    """A booktabs tabular of the headline table (3 decimals, as in the HTML report)."""
    tex_op = {"ge": r"$\geq$", "gt": "$>$"}
    lines = [
        "% Headline table written by themesim: one row per method, comparison and configured",
        "% threshold. Needs \\usepackage{booktabs}. Same numbers as headline.csv and the",
        "% at-a-glance table of summary.html. Never average across methods.",
        r"\begin{tabular}{llrrlrrlrrrr}",
        r"\toprule",
        r" & & & \multicolumn{2}{c}{Hungarian $F_1$} & Coverage"
        r" & \multicolumn{2}{c}{Matched similarity}"
        r" & \multicolumn{2}{c}{Hungarian coverage} & Raza Jaccard & Significant \\",
        r"\cmidrule(lr){4-5}\cmidrule(lr){7-8}\cmidrule(lr){9-10}",
        r"Method & Comparison & $\theta$ & value & 95\,\% CI & $F_1$ & median & IQR & A & B"
        r" & (for comparison) & match rate \\",
        r"\midrule",
    ]
    previous = None
    for r in df.to_dict("records"):
        method = str(r["method"])
        if previous is not None and method != previous:
            lines.append(r"\addlinespace")
        q1, q3 = r["matched_sim_q1"], r["matched_sim_q3"]
        iqr = "--" if _isnan(q1) or _isnan(q3) else f"{_tex_num(q1)}--{_tex_num(q3)}"
        op = tex_op.get(str(r["op"]), "")
        cells = [
            tex_escape(method) if method != previous else "",
            tex_escape(f"{r['set_a']} vs {r['set_b']}"),
            f"{op} {float(r['threshold']):g}".strip(),
            _tex_num(r["hungarian_f1"]),
            _tex_range(r.get("hungarian_f1_ci_low"), r.get("hungarian_f1_ci_high")),
            _tex_num(r["f1"]),
            _tex_num(r["matched_sim_median"]),
            iqr,
            _tex_num(r["hungarian_coverage_a"]),
            _tex_num(r["hungarian_coverage_b"]),
            _tex_num(r["raza_jaccard"]),
            _tex_num(r.get("significant_match_rate")),
        ]
        lines.append(" & ".join(cells) + r" \\")
        previous = method
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def write_headline(df: pd.DataFrame, *, out_csv, out_tex) -> None:
    """headline.csv (the metric CSVs' own precision) and headline.tex (booktabs)."""
    out_csv, out_tex = Path(out_csv), Path(out_tex)
    with atomic_path(out_csv) as tmp:
        df.to_csv(tmp, index=False, float_format="%.10g", lineterminator="\n")
    _write(out_tex, headline_tex(df))


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


def _write(path: Path, text: str) -> None:
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


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
