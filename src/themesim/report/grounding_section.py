"""The report section "Do the themes cover the same data?": text vs data figures per
comparison, the IoU heatmaps, and per text Hungarian pair the passages both sets claim and
those only one claims (short excerpts; the templates escape them)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

HEADING = "Do the themes cover the same data?"
EXCERPT_CHARS = 160
EXCERPTS = 2  # per kind of passage and pair
HEADERS = [
    "Method",
    "Comparison",
    "Basis",
    "Text Hungarian F1",
    "Grounded Hungarian F1",
    "AMI",
    "Median κ (text pairs)",
    "Krippendorff α (text pairs)",
    "Agreement across codebooks",
    "Text–data ρ",
    "Passages labelled A / B",
]


def _f(x, digits: int = 2) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "—"
    return "—" if math.isnan(x) else f"{x:.{digits}f}"


def _excerpt(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1].rstrip() + "…"


def _passages(keys, seg_text: dict | None) -> list[str]:
    if seg_text is None:  # archive.confidential: no transcript text in the report
        return []
    return [_excerpt(f"{t} #{s}: {seg_text[(t, s)]}") for t, s in sorted(keys)[:EXCERPTS]]


def _with_ci(r: dict, col: str) -> str:
    """A figure with its interval, "—" where grounding.csv lacks it (a file from before the
    column, or a method without calibrated P(match))."""
    x = _f(r.get(col))
    lo, hi = _f(r.get(f"{col}_ci_low")), _f(r.get(f"{col}_ci_high"))
    return x if x == "—" or lo == "—" else f"{x} [{lo}, {hi}]"


def _why_withheld(r: dict) -> str:
    """Why the chance-corrected figures are NaN (grounding.csv's withheld_reason), or ''."""
    why = r.get("withheld_reason")
    if not isinstance(why, str) or not why.strip() or _f(r.get("ami")) != "—":
        return ""
    n = r.get("n_transcripts")
    return f" (withheld: {int(n)} transcript(s), too few)" if pd.notna(n) else " (withheld)"


def _segment_texts(path) -> dict:
    """(transcript, segment) -> the segment's text."""
    seg = pd.read_parquet(path)
    return {
        (t, int(s)): x
        for t, s, x in zip(seg["transcript"], seg["segment"], seg["text"], strict=True)
    }


def _table_row(method: str, r: dict) -> list[str]:
    """A row of the section's table (HEADERS) from a row of grounding.csv."""
    return [
        method,
        f"{r['set_a']} vs {r['set_b']}",
        r.get("grounding_basis", "mixed"),
        _f(r["text_hungarian_f1"]),
        _f(r["grounded_hungarian_f1"]),
        _f(r["ami"]) + _why_withheld(r),
        _f(r["text_pairs_median_kappa"]),
        _f(r["text_pairs_krippendorff_alpha"]),
        _with_ci(r, "cu_alpha_codebooks"),
        _f(r["text_data_spearman"]),
        f"{_f(r['data_coverage_a'])} / {_f(r['data_coverage_b'])}",
    ]


def _comparison(spec, r: dict, embed: bool, seg_text, image, html_dir: Path, md_dir: Path):
    """A comparison's IoU heatmap (embedded for the reference's comparisons) and the passages
    of its text Hungarian pairs, on the basis of its grounding.csv row ``r``."""
    a, b = r["set_a"], r["set_b"]
    pair = f"{a}__vs__{b}"
    # no data figure on this basis (the method's coder labels no segment): its IoU
    # heatmap is all NaN, so the file is named, not embedded
    no_data = all(
        _f(r.get(c)) == "—"
        for c in ("ami", "grounded_hungarian_f1", "data_coverage_a", "data_coverage_b")
    )
    return {
        "title": f"{a} vs {b}",
        "is_reference": embed,
        "no_data": no_data,
        "heatmap": image(
            (spec.get("grounding_heatmaps") or {}).get(pair),
            html_dir,
            md_dir,
            embed=embed and not no_data,
        ),
        "pairs": _pair_passages(spec, a, b, pair, seg_text, r.get("grounding_basis", "mixed")),
    }


def grounding_view(
    methods: dict, html_dir: Path, md_dir: Path, image, withhold_text: bool = False
) -> dict | None:
    """Context of the section, or None when no method has grounding tables.

    methods: method -> spec with `grounding_csv`, `grounding_dir` (long parquets),
    `segments_dir` (labels), `segments_parquet`, `grounding_heatmaps` (pair -> png) and
    `grounding_scatter_png`; image: the report's figure helper (path, html_dir, md_dir);
    withhold_text (archive.confidential): passages are counted, never quoted.
    """
    rows, blocks, reference_rows = [], [], []
    seg_text = None
    for m, spec in methods.items():
        path = spec.get("grounding_csv")
        if not path or not Path(path).is_file():
            continue
        g = pd.read_csv(path)
        if seg_text is None and spec.get("segments_parquet"):
            seg_text = _segment_texts(spec["segments_parquet"])
        passages = None if withhold_text else seg_text or {}
        comps = []
        first = set()
        reference = spec.get("reference")
        for r in g.to_dict("records"):
            a, b = r["set_a"], r["set_b"]
            # the reference's comparisons lead; the others (each analyst in turn) are folded
            embed = not reference or a == reference
            reference_rows.append(embed)
            rows.append(_table_row(m, r))
            pair = f"{a}__vs__{b}"
            if pair in first:  # the heatmap and passages show each comparison's first basis
                continue
            first.add(pair)
            comps.append(_comparison(spec, r, embed, passages, image, html_dir, md_dir))
        blocks.append(
            {
                "method": m,
                "scatter": image(spec.get("grounding_scatter_png"), html_dir, md_dir),
                "comparisons": comps,
            }
        )
    if not rows:
        return None
    coder = coder_view(methods)
    return {
        "heading": HEADING,
        "headers": HEADERS,
        "rows": rows,
        "reference_rows": reference_rows,
        "methods": blocks,
        "coder": coder,
    }


CODER_HEADERS = [
    "Method",
    "Set",
    "Coder",
    "Median κ per theme [95 % CI]",
    "Pooled κ",
    "Pooled α [95 % CI]",
    "Themes",
    "Segments",
    "Prevalence human / coder",
]


def _basis_rows(labels: pd.DataFrame, basis: str) -> pd.DataFrame:
    """The label rows a basis compares (themesim.coder.basis; mixed: all of them)."""
    if basis == "coder":
        return labels[labels["source"] == "assigned"]
    if basis == "evidence":
        return labels[labels["source"].isin(["coded", "quote"])]
    return labels


def coder_view(methods: dict) -> dict | None:
    """The coder against the human coding (coder_agreement.csv): one row per method and set
    with human coding, and the sets whose coder no human coding checks."""
    paths = {spec.get("coder_agreement_csv") for spec in methods.values()} - {None}
    paths = [p for p in paths if Path(p).is_file()]
    if not paths:
        return None
    t = pd.read_csv(paths[0])
    t = t[t["method"].isin(methods)]
    overall = t[t["level"] == "overall"]
    rows, unchecked, no_coder = [], {}, {}
    for r in overall.to_dict("records"):
        if r["status"] == "checked":
            themes = t[(t["method"] == r["method"]) & (t["set"] == r["set"])]
            n_themes = int((themes["level"] == "theme").sum())
            rows.append(
                [
                    r["method"],
                    r["set"],
                    r["coder"],
                    f"{_f(r['median_kappa'])} {_ci(r, 'median_kappa')}",
                    _f(r["pooled_kappa"]),
                    f"{_f(r['pooled_alpha'])} {_ci(r, 'pooled_alpha')}",
                    str(n_themes),
                    str(int(r["n_segments"])),
                    f"{_f(r['prevalence_human'], 3)} / {_f(r['prevalence_coder'], 3)}",
                ]
            )
        elif r["status"] == "unchecked":
            unchecked.setdefault(r["method"], []).append(r["set"])
        else:
            no_coder.setdefault(r["method"], []).append(r["set"])
    return {
        "headers": CODER_HEADERS,
        "rows": rows,
        "unchecked": [f"{m}: {', '.join(s)}" for m, s in unchecked.items()],
        "no_coder": [f"{m}: {', '.join(s)}" for m, s in no_coder.items()],
    }


def _ci(r: dict, m: str) -> str:
    lo, hi = r.get(f"{m}_ci_low"), r.get(f"{m}_ci_high")
    if _f(lo) == "—":
        return "[—]"
    return f"[{_f(lo)}, {_f(hi)}]"


def _pair_passages(
    spec: dict, a: str, b: str, pair: str, seg_text: dict | None, basis: str = "mixed"
) -> list[dict]:
    gdir, sdir = spec.get("grounding_dir"), spec.get("segments_dir")
    if not gdir or not sdir:
        return []
    long_path = Path(gdir) / f"{pair}.parquet"
    la, lb = Path(sdir) / f"{a}.parquet", Path(sdir) / f"{b}.parquet"
    if not (long_path.is_file() and la.is_file() and lb.is_file()):
        return []
    long = pd.read_parquet(long_path)
    if "grounding_basis" in long.columns:
        long = long[long["grounding_basis"] == basis]
    la, lb = _basis_rows(pd.read_parquet(la), basis), _basis_rows(pd.read_parquet(lb), basis)
    out = []
    for r in long[long["text_pair"]].to_dict("records"):
        sa = {
            (t, int(s))
            for t, s in la.loc[la["theme_id"] == r["a_id"], ["transcript", "segment"]].itertuples(
                index=False
            )
        }
        sb = {
            (t, int(s))
            for t, s in lb.loc[lb["theme_id"] == r["b_id"], ["transcript", "segment"]].itertuples(
                index=False
            )
        }
        out.append(
            {
                "a_id": r["a_id"],
                "b_id": r["b_id"],
                "similarity": _f(r["similarity"]),
                "iou": _f(r["iou"]),
                "kappa": _f(r["kappa"]),
                "both": _passages(sa & sb, seg_text),
                "only_a": _passages(sa - sb, seg_text),
                "only_b": _passages(sb - sa, seg_text),
                "n": [len(sa & sb), len(sa - sb), len(sb - sa)],
            }
        )
    return out
