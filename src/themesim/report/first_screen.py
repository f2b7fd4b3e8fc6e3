"""The report's first screen, assembled: the answer (report/answer.py) with each row's flags,
where each generator differs by name, and the links to each comparison's own page."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from themesim.report.answer import (
    Passages,
    ThemeLists,
    answer_rows,
    differ_view,
    generators,
    primary_line,
    sensitivity,
)
from themesim.report.cautions import coder_trusted, row_flags
from themesim.report.format import (
    DASH,
    Linked,
    as_text,
    flags_cell,
    fmt,
    fmt_threshold,
    is_missing,
    relative_path,
)
from themesim.report.tables import THEME_COLUMNS, THEME_TEXT_COLUMNS, only_method, read_table
from themesim.report.verdicts import read_verdicts

PAGES_DIR = "comparisons"  # beside summary.html: one page per comparison, HTML and Markdown

ANSWER_HEADERS = ["Generator", "Verdict (primary)", "Difference [90 % CI]", "What it means",
                  "Flags"]  # fmt: skip
ONE_ANALYST_HEADERS = ["Generator", "Verdict (primary)", "Agreement", "What it means", "Flags"]
DIFFER_HEADERS = ["Generator", "Reference themes it missed", "Themes it added",
                  "Pairs it shares", "Detail"]  # fmt: skip


def page_name(a: str, b: str) -> str:
    return f"{a}__vs__{b}"


def comparison_pages(method_views: list[dict], pages_dir=None, html_dir=None, md_dir=None):
    """One page per comparison (every method's detail of it): [{"title", "name", "html",
    "md"}] in first-seen order, links relative to the summaries; each method's comparison
    gets its page's links (page_html, page_md)."""
    pages: dict = {}
    for m in method_views:
        for c in m["comparisons"]:
            name = page_name(c["set_a"], c["set_b"])
            if name not in pages:
                html = md = f"{PAGES_DIR}/{name}"
                if pages_dir is not None:
                    html = relative_path(Path(pages_dir) / name, html_dir)
                    md = relative_path(Path(pages_dir) / name, md_dir)
                pages[name] = {
                    "title": c["title"],
                    "name": name,
                    "set_a": c["set_a"],
                    "set_b": c["set_b"],
                    "html": f"{html}.html",
                    "md": f"{md}.md",
                    "is_reference": c["is_reference"],
                }
            c["page_html"], c["page_md"] = pages[name]["html"], pages[name]["md"]
    return list(pages.values())


def _read_verdicts(path) -> pd.DataFrame | None:
    if path is None or str(path) == "" or not Path(path).is_file():
        return None
    return read_verdicts(path)


def _primary_method(df, method_views) -> tuple[dict | None, float | None]:
    """The view of the primary comparison's method and its threshold (verdicts.csv's
    primary rows; without them the first method at its first threshold)."""
    by_name = {m["name"]: m for m in method_views}
    if df is not None and "primary" in df.columns:
        prim = df[df["primary"].astype(str).str.lower() == "true"]
        for r in prim.to_dict("records"):
            if r["method"] in by_name:
                return by_name[r["method"]], float(r["threshold"])
    if method_views:
        return method_views[0], float(method_views[0]["first_theta"])
    return None, None


def _fallback_generators(method_view, reference) -> list[dict]:
    """Without verdicts.csv: every set compared with the reference is its own generator."""
    sets = dict.fromkeys(
        c["set_b"] for c in (method_view or {}).get("comparisons", []) if c["set_a"] == reference
    )
    return [{"name": s, "runs": [s], "primary": None, "others": pd.DataFrame()} for s in sets]


def first_screen(study, methods, method_views, cautions, texts, coder, pages) -> dict:
    """{"answer", "differ", "verdicts" (the verdicts table or an empty one), "flags_of",
    "cautions" (the flags this screen raises itself: analyses that disagree)}."""
    df = _read_verdicts(study.get("verdicts_csv"))
    reference = study.get("reference") or ""
    view, theta = _primary_method(df, method_views)
    gens = generators(df) if df is not None else []
    fallback = not gens  # no generator rows (no verdicts table): each set on its own
    if fallback:
        gens = _fallback_generators(view, reference)
    gens = [g for g in gens if g["name"] != reference]
    differ_sets = (texts or {}).get("differ") or {}

    def flags_of(g) -> list[dict]:
        return _flags(g, (view or {}).get("name"), cautions, reference, differ_sets)

    extra = _sensitivity_cautions(gens)
    answer = None
    if gens and fallback:
        answer = _fallback_answer(gens, view, theta, flags_of)
    elif gens:
        answer = _answer(gens, view, theta, flags_of, _coder_note(coder, methods))
    differ = _differ(study, view, theta, gens, reference, pages, methods)
    verdicts = df if df is not None else pd.DataFrame(columns=["role"])
    return {
        "primary_method": (view or {}).get("name"),
        "answer": answer,
        "differ": differ,
        "verdicts": verdicts,
        "flags_of": flags_of,
        "cautions": extra,
    }


def _flags(g: dict, method, cautions, reference: str, differ_sets) -> list[dict]:
    """A generator's flags in the answer: the cautions on any of its runs (at its primary
    method, else ``method``), texts that differ in kind, an untrusted coder on the segments
    route and the sensitivity analyses that give another word."""
    r = g["primary"]
    method = r["method"] if r is not None else method
    out, seen = [], set()
    for run in g["runs"]:
        for f in row_flags(cautions, method, reference, run):
            text = f["text"] + (f" ({run})" if len(g["runs"]) > 1 else "")
            if (text, f["href"]) not in seen:
                seen.add((text, f["href"]))
                out.append({"text": text, "href": f["href"]})
    if any(run in differ_sets for run in g["runs"]):
        out.append({"text": "texts differ in kind", "href": "#flag-texts"})
    if r is not None and as_text(r.get("evidence")) == "segments":
        for c in cautions:
            if c.get("coder_set") and c.get("method") == method:
                out.append({"text": f"coder untrusted on {c['coder_set']}",
                            "href": f"#{c['id']}"})  # fmt: skip
    sens = sensitivity(g["others"], r or {}) if r is not None else {"differ": []}
    if sens["differ"]:
        words: dict = {}
        for w in sens["words"]:
            words[w] = words.get(w, 0) + 1
        said = ", ".join(f"{w} ×{k}" for w, k in sorted(words.items(), key=lambda x: -x[1]))
        out.append(
            {"text": f"{len(sens['differ'])} of {sens['n']} other analyses: {said}",
             "href": "#flag-sens-" + _slug(g["name"])}
        )  # fmt: skip
    return out


def _sensitivity_cautions(gens: list[dict]) -> list[dict]:
    """A caution for each generator whose other analyses (sensitivity) give another word
    than its primary one."""
    extra = []
    for g in gens:
        r = g["primary"]
        if r is None:
            continue
        sens = sensitivity(g["others"], r)
        if sens["differ"]:
            shown = "; ".join(sens["differ"][:6])
            more = f"; and {len(sens['differ']) - 6} more" if len(sens["differ"]) > 6 else ""
            extra.append(
                {
                    "id": "flag-sens-" + _slug(g["name"]),
                    "method": "",
                    "rows": {},
                    "title": f"{g['name']}: other analyses give another word",
                    "short": f"{len(sens['differ'])} of {sens['n']} other analyses differ from "
                    f"the primary {r['verdict']}; read the primary word, fixed before the data.",
                    "text": f"The primary analysis ({r['method']} "
                    f"{fmt_threshold(r['threshold'], r['op'])}, route {r['evidence']}) says "
                    f"{r['verdict']}; {len(sens['differ'])} of {sens['n']} sensitivity analyses "
                    f"say otherwise: {shown}{more}. Read the primary word, fixed before the "
                    "data; a word that holds under one method only is a property of that "
                    "method, not of the generator.",
                }
            )
    return extra


def _answer(gens, view, theta, flags_of, coder_note: str) -> dict:
    """The answer from the verdicts table: each generator's primary word and difference
    (with one analyst: its agreement, and no word)."""
    rows = answer_rows(gens, flags_of)
    prim = next((g["primary"] for g in gens if g["primary"] is not None), None)
    one = prim is not None and int(float(prim.get("n_analysts") or 0)) < 2
    return {
        "intro": _intro(prim, view, theta),
        "headers": ONE_ANALYST_HEADERS if one else ANSWER_HEADERS,
        "rows": [
            [
                Linked([(x["generator"], f"#verdict-{_slug(g['name'])}")], css="page"),
                Linked([(x["word"], "#g-verdict")], css="term") if x["word"] != "–" else DASH,
                x.get("agreement", DASH) if one else x["difference"],
                x["meaning"],
                flags_cell(x["flags"]),
            ]
            for g, x in zip(gens, rows, strict=True)
        ],
        "coder_note": coder_note,
    }


FALLBACK_HEADERS = ["Generator", "Verdict (primary)", "Hungarian F1 [95 % CI]", "What it means",
                    "Flags"]  # fmt: skip


def _fallback_answer(gens, view, theta, flags_of) -> dict:
    """Without generator rows: each set's Hungarian F1 at the primary method and θ, and no
    word (a word needs the analysts' agreement with each other)."""
    rows = []
    for g in gens:
        mine = [
            r for r in view["records"] if r["set_b"] == g["name"] and isclose(r["threshold"], theta)
        ]
        r = mine[0] if mine else {}
        f1 = DASH
        if r:
            lo, hi = r.get("hungarian_f1_ci_low"), r.get("hungarian_f1_ci_high")
            f1 = fmt(r["hungarian_f1"]) + (
                "" if is_missing(lo) or is_missing(hi) else f" [{fmt(lo)}, {fmt(hi)}]"
            )
        rows.append(
            [
                g["name"],
                "no word",
                f1,
                "A verdict word needs the analysts' agreement with each other "
                "(reference_group: two analysts or more).",
                flags_cell(flags_of(g)),
            ]
        )
    return {
        "intro": _intro(None, view, theta),
        "headers": FALLBACK_HEADERS,
        "rows": rows,
        "coder_note": "",
    }


def _intro(prim, view, theta) -> str:
    if prim is None:
        name = (view or {}).get("name", "")
        return (
            f"No verdicts: each set's one-to-one agreement with the reference at {name} "
            f"θ {fmt_threshold(theta, (view or {}).get('op'))}."
        )
    p = primary_line(prim)
    analysts = ", ".join(p["analysts"])
    if len(p["analysts"]) < 2:
        return (
            f"Primary comparison, fixed before the data: {p['method']} θ {p['theta']}, route "
            f"{p['route']}. One analyst ({analysts}), so no generator gets a verdict word; "
            "each gets its agreement with its interval."
        )
    return (
        f"Primary comparison, fixed before the data: {p['method']} θ {p['theta']}, route "
        f"{p['route']}; margin ±{p['margin']}; {p['level']} intervals. The analysts "
        f"({analysts}) agree with each other at {p['human_human']}; the difference is a "
        "generator's agreement with them minus that."
    )


def _coder_note(coder, methods) -> str:
    """One sentence where the automatic coder is not trusted on the study's own coding."""
    if coder is None or coder.empty:
        return ""
    rows = coder[coder["method"].isin(list(methods))].to_dict("records")
    low = [r for r in rows if not coder_trusted(r)]
    if not low:
        return ""
    which = ", ".join(sorted({f"{r['method']} on {r['set']}" for r in low}))
    return (
        f"The automatic coder is not trusted here ({which}: pooled κ below 0.4 on the "
        "analysts' own coding), so the segments route and the grounded figures are not led "
        "with: read the text figures."
    )


def _differ(study, view, theta, gens, reference, pages, methods) -> dict | None:
    if view is None or not gens:
        return None

    spec = methods.get(view["name"]) or {}
    what = f"themes CSV of method {view['name']!r}"
    themes = read_table(spec["themes_csv"], what, THEME_COLUMNS, THEME_TEXT_COLUMNS)
    lists = ThemeLists(
        only_method(themes, view["name"], spec["themes_csv"], "themes CSV"),
        theta,
        view["op"],
        (view.get("decisions") or {}).get("frame"),
    )
    source = (
        spec
        if spec.get("segments_dir")
        else next((s for s in methods.values() if s.get("segments_dir")), {})
    )
    passages = Passages(
        source.get("segments_dir"),
        source.get("segments_parquet"),
        withhold=bool(study.get("confidential")),
    )
    page_of = {(p["set_a"], p["set_b"]): p for p in pages}

    def page(a, b):
        return page_of.get((a, b))

    out, rows = [], []
    for g in gens:
        d = differ_view(g, reference, lists, passages, page)
        if not d["runs"]:
            continue
        out.append(d)
        links = [(p["title"].split(" vs ", 1)[1], p["html"]) for p in d["pages"] if p]
        rows.append(
            [
                g["name"],
                d["missed_text"],
                d["added_text"],
                d["shared_text"]
                + (f" ({d['n_rejected']} not kept by the z rule: †)" if d["n_rejected"] else ""),
                Linked(links, css="page", sep=" · ") if links else DASH,
            ]
        )
    if not out:
        return None
    theta_text = fmt_threshold(theta, view["op"])
    no_passages = ""
    if not passages.available:
        no_passages = (
            "No passages: they are withheld (archive.confidential)."
            if study.get("confidential")
            else "No passages: grounding did not run, so no theme is placed in the transcripts "
            "(grounding.active)."
        )
    return {
        "intro": f"By name, at the primary method {view['name']} θ {theta_text}: the reference "
        f"{reference}'s themes each generator missed (no theme of it reaches θ), the themes it "
        "added (none of the reference's reaches them), and the one-to-one pairs it shares. "
        "Each comparison's page has every theme with its scores.",
        "headers": DIFFER_HEADERS,
        "rows": rows,
        "generators": out,
        "no_passages": no_passages,
        "method": view["name"],
        "theta": theta_text,
    }


def _slug(text) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "x"


def isclose(a, b) -> bool:
    return math.isclose(float(a), float(b), rel_tol=1e-9)
