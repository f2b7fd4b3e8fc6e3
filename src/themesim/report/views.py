"""The report's views: per-method tables, per-theme rows, threshold changes, side by side.

Each view is a dict of display-ready strings for the templates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
from scipy.stats import beta

from themesim.metrics import registry
from themesim.metrics.thresholds import read_thresholds
from themesim.report.figures import METHOD_FIGURES
from themesim.report.format import (
    DASH,
    as_text,
    fmt,
    fmt_int,
    fmt_threshold,
    image,
    is_missing,
    op_symbol,
    relative_path,
    theme_label,
)
from themesim.report.glossary import Header
from themesim.report.headline import glance_numbers
from themesim.report.pair_limit import over_limit, shown_pairs
from themesim.report.restriction import ran_on_note
from themesim.report.tables import (
    COMPARISON_COLUMNS,
    TEXT_COLUMNS,
    THEME_COLUMNS,
    THEME_TEXT_COLUMNS,
    comparison_pairs,
    only_method,
    read_table,
    sorted_records,
)
from themesim.report.textblock import format_text_block

# (header, column) of the per-method table (metrics/registry.py).
METHOD_TABLE = [("θ", None), ("A / B themes", None), *registry.section("method_table")]
GLANCE_HEADERS = [
    "Method",
    "Comparison",
    "θ",
    registry.label("hungarian_f1"),
    registry.label("hungarian_f1") + " 95 % CI",
    registry.label("f1"),
    registry.label("matched_sim_median"),
    "Matched sim. IQR (Q1–Q3)",
    registry.label("hungarian_coverage_a"),
    registry.label("hungarian_coverage_b"),
    registry.label("raza_jaccard"),
    registry.label("significant_match_rate"),
]
# The paraphrase ceiling (metrics.sets.ceiling, docs/metrics.md): columns of the glance table only
# when a method's comparisons.csv has them (`ceiling.active`).
CEILING_GLANCE = [
    (registry.label(col), col, digits)
    for col, digits in (
        ("ceiling_median", 3),
        ("matched_sim_pct_of_ceiling", 1),
        ("normalised_alignment", 3),
    )
]
CEILING_NOTE = (
    "Paraphrase ceiling (rows whose A is the reference): the ceiling median is the median over "
    "A's themes of each theme's median similarity to k LLM paraphrases of it, on the method's "
    "scale; % of ceiling = 100 · matched sim. median / ceiling median; normalised alignment = "
    "(observed − null) / (ceiling − null), with observed the Hungarian matched median and null "
    "the word-salad median: 0 = no better than salad, 1 = as close as a paraphrase."
)
THEME_HEADERS = ["Theme", "Best match", "Best", "Second", "Hungarian partner", "Partner sim."]
PARTNER_NOTE = (
    "Hungarian partner: the theme's partner in the one-to-one assignment; "
    "the pair counts as matched only when its similarity meets the threshold θ."
)

# Per-theme table: gap and category are optional (older themes.csv files lack them).
THEME_EXTRA_HEADERS = ["Gap", "Category"]
CATEGORY_TEXT = {
    "confident_unique": "confident unique",
    "ambiguous": "ambiguous",
    "clear_but_poor": "clear but poor",
    "no_good_match": "no good match",
}
# "What changed across thresholds": these metrics, read from the sweep.
CHANGE_METRICS = registry.section("threshold_changes")
SETS_TABLE = [
    ("Set", "set"),
    ("Themes", "n_themes"),
    ("Coherence SC (mean)", "sc_mean"),
    ("Distinctiveness SD (mean)", "sd_mean"),
    ("SemDiv", "semdiv"),
    ("NPMI (mean)", "npmi_mean"),
]
# Raw-versus-z decision table (metrics.sets.scales.decision_changes).
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


def _glance_row(method: str, r: Mapping) -> list[str]:
    bound = " (most possible)" if bound_note(r) and _has_interval(r) else ""
    return [
        method,
        f"{r['set_a']} vs {r['set_b']}",
        r["theta"],
        *glance_numbers(r, fmt, _interval, bound),
    ]


def exact_f1_interval(r: Mapping, level: float = 0.95) -> tuple[float, float]:
    """The plain exact (Clopper–Pearson) interval of Hungarian F1, themes independent: the
    count of one-to-one pairs out of min(n_a, n_b), read as F1 = 2k / (n_a + n_b)."""
    k, n_a, n_b = int(r["hungarian_n_matched"]), int(r["n_a"]), int(r["n_b"])
    m, a = min(n_a, n_b), (1 - level) / 2
    lo = 0.0 if k <= 0 else float(beta.ppf(a, k, m - k + 1))
    hi = 1.0 if k >= m else float(beta.ppf(1 - a, k + 1, m - k))
    return 2 * m * lo / (n_a + n_b), 2 * m * hi / (n_a + n_b)


def interval_assumes(r: Mapping) -> str:
    """What the row's Hungarian F1 interval assumes (its ci_method), said on the row; an
    interval widened by the match clusters' design effect shows the plain exact one beside
    it, so two rows of equal counts and unequal intervals say why."""
    how = as_text(r.get("ci_method"))
    if not how or not _has_interval(r):
        return DASH
    if how.startswith("clustered by declared group"):
        return "declared groups"
    if how.startswith("themes independent but for the match clusters"):
        try:
            lo, hi = exact_f1_interval(r)
        except (TypeError, ValueError, KeyError):
            return "widened (clusters)"
        shown = (float(r["hungarian_f1_ci_low"]), float(r["hungarian_f1_ci_high"]))
        if abs(shown[0] - lo) < 5e-4 and abs(shown[1] - hi) < 5e-4:
            return "themes independent"
        return f"widened (clusters); exact {fmt(lo)}–{fmt(hi)}"
    if how.startswith("themes independent"):
        return "themes independent"
    return how.split(":", 1)[0]


def _ceiling_cells(r: Mapping) -> list[str]:
    """The ceiling columns of a row; dashes where the method has none (no ceiling kind)."""
    return [fmt(r.get(col), digits) for _, col, digits in CEILING_GLANCE]


def _interval(lo, hi) -> str:
    return DASH if is_missing(lo) or is_missing(hi) else f"{fmt(lo)}–{fmt(hi)}"


def _has_interval(r: Mapping) -> bool:
    return not is_missing(r.get("hungarian_f1_ci_high"))


def f1_bound(n_a, n_b) -> float:
    """The largest Hungarian F1 two sets of n_a and n_b themes allow: 2·min / (n_a + n_b)."""
    n_a, n_b = int(n_a), int(n_b)
    return 2 * min(n_a, n_b) / (n_a + n_b) if n_a + n_b else float("nan")


def bound_note(r: Mapping) -> str:
    """'' or the sentence saying that the row's Hungarian F1 interval (or the F1 itself) meets
    the most the set sizes allow, below 1 when the sets differ in size."""
    try:
        most = f1_bound(r["n_a"], r["n_b"])
    except (TypeError, ValueError, KeyError):
        return ""
    if is_missing(most) or most >= 1 - 1e-9:
        return ""
    hi = r.get("hungarian_f1_ci_high")
    top = r["hungarian_f1"] if is_missing(hi) else hi
    if is_missing(top) or abs(float(top) - most) > 5e-4:
        return ""
    what = "its interval reaches" if not is_missing(hi) else "it is"
    return (
        f"{r['set_a']} vs {r['set_b']} ({r['theta']}): "
        f"{fmt(most)} is the most Hungarian F1 possible for {fmt_int(r['n_a'])} against "
        f"{fmt_int(r['n_b'])} themes (2 × {min(int(r['n_a']), int(r['n_b']))} / "
        f"{int(r['n_a']) + int(r['n_b'])}), and {what} that bound: the sets' sizes, not the "
        "method, keep it below 1."
    )


def _line(r: Mapping) -> str:
    """One comparison at one θ in a line: Hungarian F1 and the pairs it counts."""
    k = r.get("hungarian_n_matched")
    pairs = "" if is_missing(k) else f" ({fmt_int(k)} of {fmt_int(r['n_a'])} themes paired)"
    return f"θ {r['theta']}: Hungarian F1 {fmt(r['hungarian_f1'])}{pairs}"


def _method_row(r: Mapping) -> list[str]:
    cells = []
    for _, col in METHOD_TABLE:
        if col is None:
            continue
        cells.append(fmt_int(r[col]) if col.endswith("_n_matched") else fmt(r[col]))
    return [
        f"{r['set_a']} vs {r['set_b']}",
        r["theta"],
        f"{fmt_int(r['n_a'])} / {fmt_int(r['n_b'])}",
        *cells,
    ]


def _theme_rows(themes: pd.DataFrame, side: str) -> list[list[str]]:
    rows = []
    for r in themes[themes["side"] == side].to_dict("records"):
        partner = theme_label(r["hungarian_partner_id"], r["hungarian_partner_name"])
        category = as_text(r.get("category")).strip()
        rows.append(
            [
                theme_label(r["theme_id"], r["theme_name"]),
                theme_label(r["best_match_id"], r["best_match_name"]),
                fmt(r["best_similarity"]),
                fmt(r["second_similarity"]),
                partner,
                fmt(r["hungarian_similarity"]) if partner != DASH else DASH,
                fmt(r.get("gap_abs")),
                CATEGORY_TEXT.get(category, category) or DASH,
            ]
        )
    return rows


def _threshold_changes(sweep: pd.DataFrame | None, rows: list[dict]) -> dict:
    """Per headline metric: value at each configured θ, and where the sweep keeps or loses it."""
    headers = ["Metric"] + [Header(r["theta"], "theta") for r in rows]
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
        at_max = [
            x for x, y in zip(t, v, strict=True) if not is_missing(best) and y >= best - 1e-12
        ]
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
    df = read_table(path, what, [c for _, c in spec], text_cols)
    df = only_method(df, method, path, what)
    rows = []
    for r in df.to_dict("records"):
        cells = []
        for _, col in spec:
            if col in text_cols:
                cells.append(as_text(r[col]))
            elif col.startswith("n_"):
                cells.append(fmt_int(r[col]))
            else:
                cells.append(fmt(r[col]))
        rows.append(cells)
    return {"headers": [h for h, _ in spec], "rows": rows, "frame": df}


def _figures(spec: Mapping, html_dir: Path, md_dir: Path, place: str) -> list[dict]:
    """The method's figures shown at one place of its section, each with its image (None
    where the method has none) and words."""
    return [
        {
            "img": image(spec.get(f.key), html_dir, md_dir),
            "title": f.title,
            "alt": f.alt,
            "caption": f.caption,
            "missing": f.missing,
        }
        for f in METHOD_FIGURES
        if f.place == place
    ]


def _method_tables(name: str, spec: Mapping):
    """The method's comparisons and themes tables and its sweep (None without the file),
    each of its rows only."""
    comp_path = spec.get("comparisons_csv")
    themes_path = spec.get("themes_csv")
    comp = read_table(
        comp_path, f"comparisons CSV of method {name!r}", COMPARISON_COLUMNS, TEXT_COLUMNS
    )
    comp = only_method(comp, name, comp_path, "comparisons CSV")
    themes = read_table(
        themes_path, f"themes CSV of method {name!r}", THEME_COLUMNS, THEME_TEXT_COLUMNS
    )
    themes = only_method(themes, name, themes_path, "themes CSV")
    sweep = None
    sweep_path = spec.get("sweep_csv")
    if sweep_path and Path(sweep_path).is_file():
        sweep = read_table(
            sweep_path, f"sweep CSV of method {name!r}", COMPARISON_COLUMNS, TEXT_COLUMNS
        )
        sweep = only_method(sweep, name, sweep_path, "sweep CSV")
    return comp, themes, sweep


def _shown(comp: pd.DataFrame, records: list[dict], spec: Mapping):
    """The comparisons that get a section, the rows the tables show, and (None within the
    limit) what plots.max_pair_panels left out: above it, the reference's only."""
    pairs, shown_records = comparison_pairs(comp), records
    limit, limited = spec.get("max_pair_panels"), None
    if over_limit(len(pairs), limit):
        limited = {"n": f"{len(pairs):,}", "limit": limit}
        pairs = shown_pairs(pairs, spec.get("reference"), limit)
        keep = set(pairs)
        shown_records = [r for r in records if (r["set_a"], r["set_b"]) in keep]
        limited["shown"] = len(pairs)
    return pairs, shown_records, limited


def _comparisons(pairs, records, themes, sweep, spec: Mapping, html_dir: Path, md_dir: Path):
    """Each comparison's section: its text blocks, heatmap, per-theme rows and what changes
    across thresholds.

    Figures of the reference's comparisons are embedded; those of the others (each analyst
    of the reference group the reference in turn, or every pair) are named by file: their
    numbers are in the tables, and embedding them all tripled the demo report's size."""
    heatmaps = spec.get("heatmaps") or {}
    reference = spec.get("reference")
    comparisons = []
    for set_a, set_b in pairs:
        rows = [r for r in records if (r["set_a"], r["set_b"]) == (set_a, set_b)]
        mine = themes[(themes["set_a"] == set_a) & (themes["set_b"] == set_b)]
        swept = (
            None if sweep is None else sweep[(sweep["set_a"] == set_a) & (sweep["set_b"] == set_b)]
        )
        embed = not reference or set_a == reference
        comparisons.append(
            {
                "set_a": set_a,
                "set_b": set_b,
                "title": f"{set_a} vs {set_b}",
                "is_reference": embed,
                "bound_notes": [n for n in map(bound_note, rows) if n],
                "blocks": [
                    {
                        "threshold": r["theta"],
                        "text": format_text_block(r, r["theta"]),
                        "line": _line(r),
                    }
                    for r in rows
                ],
                "heatmap": image(
                    heatmaps.get(f"{set_a}__vs__{set_b}"), html_dir, md_dir, embed=embed
                ),
                "themes_a": _theme_rows(mine, "a"),
                "themes_b": _theme_rows(mine, "b"),
                "changes": _threshold_changes(swept, rows),
            }
        )
    return comparisons


def _optional_tables(name: str, spec: Mapping):
    """The method's sets, runs and decision-change tables (each None when not produced)."""
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
    if decisions is not None:  # the z θ as the cautions name it
        decisions["frame"]["z_theta"] = decisions["frame"]["z_threshold"].map(fmt_threshold)
    return sets, runs, decisions


def _runs_score(runs: dict | None) -> str:
    """Run consistency, one score per run group (runs are never compared across groups)."""
    runs_score = DASH
    if runs is not None and "run_consistency" in runs["frame"].columns and len(runs["frame"]):
        per_group = runs["frame"].drop_duplicates("group")
        runs_score = "; ".join(
            f"{g} {fmt(v)}"
            for g, v in zip(per_group["group"], per_group["run_consistency"], strict=True)
        )
    return runs_score


def method_view(name: str, spec: Mapping, html_dir: Path, md_dir: Path) -> dict:
    comp_path = spec.get("comparisons_csv")
    comp, themes, sweep = _method_tables(name, spec)
    records = sorted_records(comp)
    for r in records:  # each row's θ as every part of the report shows it
        r["theta"] = fmt_threshold(r["threshold"], r.get("op"))
    pairs, shown_records, limited = _shown(comp, records, spec)
    reference = spec.get("reference")
    comparisons = _comparisons(pairs, records, themes, sweep, spec, html_dir, md_dir)
    resolved = read_thresholds(spec["thresholds_csv"])  # as the metrics job resolved them
    thresholds = resolved.values
    op = resolved.op
    sets, runs, decisions = _optional_tables(name, spec)
    return {
        "name": name,
        "description": spec.get("description") or "",
        "ran_on_note": _ran_on_note(name, spec.get("ran_on")),
        "kind": spec.get("kind") or "",
        "scale": scale_text(spec.get("kind"), resolved.scale),
        "kind_text": KIND_TEXT.get(spec.get("kind") or "", ""),
        "limits": KIND_LIMITS.get(spec.get("kind") or "", ""),
        "glance_reference": [not reference or r["set_a"] == reference for r in shown_records],
        "bound_notes": [n for n in map(bound_note, shown_records) if n],
        "clamp": resolved.clamp,
        "op": op,
        "op_text": f"a pair matches when S {op_symbol(op)} θ",
        "thresholds": ", ".join(
            f"{t:g}" + (" (calibrated)" if c else "")
            for t, c in zip(thresholds, resolved.calibrated(), strict=True)
        ),
        "first_threshold": fmt_threshold(resolved.first, op),
        "first_theta": resolved.first,
        "records": records,
        "table_rows": [_method_row(r) for r in shown_records],
        "glance_rows": [_glance_row(name, r) for r in shown_records],
        "shown_records": shown_records,
        "ceiling": all(col in comp.columns for _, col, _ in CEILING_GLANCE),
        "ceiling_cells": [_ceiling_cells(r) for r in shown_records],
        "comparisons": comparisons,
        "limited": limited,
        "comparisons_csv_html": relative_path(Path(comp_path), html_dir),
        "comparisons_csv_md": relative_path(Path(comp_path), md_dir),
        # each figure's words from report/figures.py, by where the templates show it
        "figures": _figures(spec, html_dir, md_dir, "figures"),
        "run_consistency": _figures(spec, html_dir, md_dir, "runs")[0],
        "files_only": [
            {"title": f.title, "path": relative_path(Path(spec[f.key]), html_dir), "why": f.caption}
            for f in METHOD_FIGURES
            if f.place == "files" and spec.get(f.key) and Path(spec[f.key]).is_file()
        ],
        # plots.max_pair_heatmaps exceeded: every pair at a glance instead of per-pair heatmaps
        "pairs_overview": image(spec.get("pairs_overview_png"), html_dir, md_dir),
        "sets": sets,
        "runs": runs,
        "runs_score": _runs_score(runs),
        "decisions": decisions if decisions is not None and decisions["rows"] else None,
    }


# What each kind of method scores, in plain words (the report's opening paragraph).
KIND_TEXT = {
    "sentence_transformer": "a sentence-embedding model: the cosine of the two theme texts' "
    "vectors",
    "abtt": "the same embeddings with their most common directions removed (all-but-the-top)",
    "tfidf": "TF-IDF: the cosine of the two texts' weighted word counts",
    "llm_judge": "an LLM judge asked how far two themes overlap (0–1)",
    "precomputed": "scores made elsewhere, read from files",
}
# What a kind cannot see, said beside its rows.
KIND_LIMITS = {
    "tfidf": (
        "TF-IDF scores shared words only: a paraphrase in other words scores 0 "
        "(“Loneliness” against “Social isolation”). Read its low figures as few shared words, "
        "not as different themes; an embedding method sees meaning."
    ),
}


def scale_text(kind, scale: str) -> str:
    """The scale a method's scores are on, as the Methods table names it: "cosine" is the
    scale setting for scores as the method gives them, which only embeddings make cosines."""
    named = {
        "angular": "angular similarity",
        "z": "within-set z",
        "calibrated": "calibrated P(match)",
    }
    if scale != "cosine":
        return named.get(scale, scale)
    return {
        "tfidf": "cosine of TF-IDF vectors",
        "llm_judge": "the judge's score as given (0–1)",
        "precomputed": "scores as given",
    }.get(kind or "", "cosine")


def side_by_side_table(views: list[dict]) -> dict:
    """Rows = comparisons, columns = methods: Hungarian F1 at each method's first θ."""
    comps = list(dict.fromkeys((c["set_a"], c["set_b"]) for m in views for c in m["comparisons"]))
    headers = ["Comparison"]
    headers += [Header(f"{m['name']} ({m['first_threshold']})", "hungarian-f1") for m in views]
    rows = []
    for a, b in comps:
        cells = [f"{a} vs {b}"]
        for m in views:
            mine = [r for r in m["records"] if (r["set_a"], r["set_b"]) == (a, b)]
            # comparisons.csv keeps 10 digits of a threshold, thresholds.csv every digit
            at_first = [
                r
                for r in mine
                if math.isclose(float(r["threshold"]), m["first_theta"], rel_tol=1e-9)
            ]
            first = (at_first or mine or [None])[0]
            if not mine:  # a method restricted by `comparisons:` to others
                cells.append("not run")
                continue
            cells.append(DASH if first is None else fmt(first["hungarian_f1"]))
        rows.append(cells)
    return {"headers": headers, "rows": rows}


def _ran_on_note(name: str, ran_on) -> str:
    return ran_on_note(name, ran_on)
