"""The summary report's cautions: where two figures point different ways, each saying which
figure to trust and why."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from themesim.report.format import fmt, fmt_int
from themesim.report.overview import join_names
from themesim.report.verdicts import CODER_TRUSTED

CAUTIONS_NONE = (
    "No two figures point different ways: no method's raw one-to-one matches all fail the "
    "within-set z rule, no method calls more than 40 % of all theme pairs a match, and no "
    "automatic coder codes a human-coded set below moderate agreement (pooled κ 0.4)."
)
RAZA_ALMOST_ALL = 0.4  # share of all theme pairs at or above θ: the method matches nearly all


def build_cautions(methods: dict, method_views: list[dict], coder=None) -> list[dict]:
    """Warnings where two signals disagree, each saying which figure to trust and why.

    Each is a flag too: `id` (its anchor), `method`, and `rows`, (set_a, set_b) -> the few
    words every row of that comparison and method carries (the reconciled figure), so no row
    shown before the caution is contradicted by it without its own flag."""
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
                z = rejected["z_theta"].iloc[0]
                out.append(
                    {
                        "id": f"flag-z-{m['anchor']}",
                        "method": m["name"],
                        "rows": {
                            (r["set_a"], r["set_b"]): f"z rule keeps 0 of {fmt_int(r['n_raw'])}"
                            for r in rejected.to_dict("records")
                        },
                        "title": f"{m['name']}: every raw one-to-one match fails the within-set "
                        "z rule",
                        "short": "Trust the within-set z decision: these pairs are no more "
                        "alike than one set's own themes, so their raw Hungarian F1 is an "
                        "upper bound.",
                        "text": f"In {join_names(comps)} (raw matches in brackets), every "
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
        f"{r['theta']}"
        for r in flagged
    ]
    first = flagged[0]
    rows = {
        (r["set_a"], r["set_b"]): f"matches {100 * float(r['raza_jaccard']):.0f} % of all pairs"
        for r in flagged
    }
    alt = [
        f"{o['name']} {fmt(x['hungarian_f1'])}"
        for o in method_views
        if o["name"] != m["name"] and o["kind"] in ("sentence_transformer", "abtt")
        for x in o["records"]
        if (x["set_a"], x["set_b"]) == (first["set_a"], first["set_b"])
    ][:3]
    who = "the judge" if m["kind"] == "llm_judge" else m["name"]
    return {
        "id": f"flag-all-{m['anchor']}",
        "method": m["name"],
        "rows": rows,
        "title": f"{m['name']} matches almost every pair of themes",
        "short": "Its Hungarian F1 counts the one-to-one assignment, not agreement: trust the "
        "embedding methods' figures for these comparisons, or calibrate it.",
        "text": f"{m['name']} calls {join_names(shares[:4])}"
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


def coder_checks(methods: dict):
    """The overall rows of coder_agreement.csv that checked the coder against a human
    coding (method, set, pooled κ and its interval), or None without that table."""
    paths = {str(s.get("coder_agreement_csv")) for s in methods.values()} - {"None", ""}
    paths = [p for p in sorted(paths) if Path(p).is_file()]
    if not paths:
        return None

    t = pd.read_csv(paths[0])
    return t[(t["level"] == "overall") & (t["status"] == "checked")]


def _coder_cautions(t, methods: dict) -> list[dict]:
    """t: coder_checks' rows (None without coder_agreement.csv)."""
    if t is None:
        return []
    t = t[t["method"].isin(list(methods))]
    out = []
    for r in t.to_dict("records"):
        kappa, low = r.get("pooled_kappa"), r.get("pooled_kappa_ci_low")
        if _isnan_float(kappa):
            continue
        at_chance = float(kappa) < CODER_AT_CHANCE or (not _isnan_float(low) and float(low) <= 0)
        if "coder_trusted" in r:  # the coder's own table says (its pooled κ on our coding)
            trusted = coder_trusted(r)
        else:
            trusted = not at_chance and float(kappa) >= CODER_TRUSTED
        if trusted:
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
                "id": f"flag-coder-{_slug(r['method'])}-{_slug(r['set'])}",
                "method": r["method"],
                "coder_set": r["set"],
                "rows": {},
                "title": f"{r['method']}: the coder codes {r['set']} {how}",
                "short": f"Pooled κ {fmt(kappa)}{ci}: trust the rows of basis evidence and the "
                "text figures, not basis coder.",
                "text": f"Against {r['set']}'s human coding the automatic coder ({r['coder']}) "
                f"reaches pooled κ {fmt(kappa)}{ci}, {said}. The data figures "
                f"of basis coder for {r['method']} (grounded Hungarian F1, AMI, κ of the text "
                "pairs) rest on this coder: trust the rows of basis evidence (the sets' own "
                "coding) and the text figures instead." + _validation(r),
            }
        )
    return out


def coder_trusted(r) -> bool:
    """coder_agreement.csv's `coder_trusted` (pooled κ ≥ 0.4 on the study's own coding)
    where the table has it, else the rule it states, read from pooled κ."""
    value = r.get("coder_trusted")
    if isinstance(value, str) and value.strip():
        return value.strip().lower() in ("true", "1", "yes")
    if not _isnan_float(value):
        return bool(float(value))
    kappa = r.get("pooled_kappa")
    return not _isnan_float(kappa) and float(kappa) >= CODER_TRUSTED


def _validation(r) -> str:
    """The coder's own validation figures (coder_agreement.csv's `coder_validation*`
    columns, where the table has them), as one clause."""
    cells = [
        f"{k.removeprefix('coder_validation').strip('_').replace('_', ' ') or 'validation'} "
        f"{fmt(v) if not _isnan_float(v) else v}"
        for k, v in r.items()
        if str(k).startswith("coder_validation") and str(v).strip() and str(v) != "nan"
    ]
    return f" The coder's validation: {'; '.join(cells)}." if cells else ""


def _slug(text) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "x"


def row_flags(cautions: list[dict], method: str, set_a: str, set_b: str) -> list[dict]:
    """The flags a row of that method and comparison carries: {"text", "href"} each."""
    return [
        {"text": c["rows"][(set_a, set_b)], "href": f"#{c['id']}"}
        for c in cautions
        if c.get("method") == method and (set_a, set_b) in c.get("rows", {})
    ]
