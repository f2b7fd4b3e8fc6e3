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
    "Text Hungarian F1",
    "Grounded Hungarian F1",
    "AMI",
    "Median κ (text pairs)",
    "Krippendorff α (text pairs)",
    "Text–data ρ",
    "Coverage A / B",
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


def grounding_view(
    methods: dict, html_dir: Path, md_dir: Path, image, withhold_text: bool = False
) -> dict | None:
    """Context of the section, or None when no method has grounding tables.

    methods: method -> spec with `grounding_csv`, `grounding_dir` (long parquets),
    `segments_dir` (labels), `segments_parquet`, `grounding_heatmaps` (pair -> png) and
    `grounding_scatter_png`; image: the report's figure helper (path, html_dir, md_dir);
    withhold_text (archive.confidential): passages are counted, never quoted.
    """
    rows, blocks = [], []
    seg_text = None
    for m, spec in methods.items():
        path = spec.get("grounding_csv")
        if not path or not Path(path).is_file():
            continue
        g = pd.read_csv(path)
        if seg_text is None and spec.get("segments_parquet"):
            seg = pd.read_parquet(spec["segments_parquet"])
            seg_text = {
                (t, int(s)): x
                for t, s, x in zip(seg["transcript"], seg["segment"], seg["text"], strict=True)
            }
        comps = []
        for r in g.to_dict("records"):
            a, b = r["set_a"], r["set_b"]
            rows.append(
                [
                    m,
                    f"{a} vs {b}",
                    _f(r["text_hungarian_f1"]),
                    _f(r["grounded_hungarian_f1"]),
                    _f(r["ami"]),
                    _f(r["text_pairs_median_kappa"]),
                    _f(r["text_pairs_krippendorff_alpha"]),
                    _f(r["text_data_spearman"]),
                    f"{_f(r['data_coverage_a'])} / {_f(r['data_coverage_b'])}",
                ]
            )
            pair = f"{a}__vs__{b}"
            comps.append(
                {
                    "title": f"{a} vs {b}",
                    "heatmap": image(
                        (spec.get("grounding_heatmaps") or {}).get(pair), html_dir, md_dir
                    ),
                    "pairs": _pair_passages(
                        spec, a, b, pair, None if withhold_text else seg_text or {}
                    ),
                }
            )
        blocks.append(
            {
                "method": m,
                "scatter": image(spec.get("grounding_scatter_png"), html_dir, md_dir),
                "comparisons": comps,
            }
        )
    if not rows:
        return None
    return {"heading": HEADING, "headers": HEADERS, "rows": rows, "methods": blocks}


def _pair_passages(spec: dict, a: str, b: str, pair: str, seg_text: dict | None) -> list[dict]:
    gdir, sdir = spec.get("grounding_dir"), spec.get("segments_dir")
    if not gdir or not sdir:
        return []
    long_path = Path(gdir) / f"{pair}.parquet"
    la, lb = Path(sdir) / f"{a}.parquet", Path(sdir) / f"{b}.parquet"
    if not (long_path.is_file() and la.is_file() and lb.is_file()):
        return []
    long = pd.read_parquet(long_path)
    la, lb = pd.read_parquet(la), pd.read_parquet(lb)
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
