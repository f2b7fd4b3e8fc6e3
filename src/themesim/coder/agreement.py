"""The coder against the human coding: coder_agreement.csv (docs/grounding.md).

Per method and set with coded segments, the units are the segments the coder may code (not
spoken by grounding.exclude_speakers), the human coding is the set's `coded` labels and the
coder's its `assigned` labels (each transcript coded blind: themesim.coder.assign). Per theme
Cohen's κ, Krippendorff's α, percent agreement and each coding's prevalence; overall the
median per-theme κ and α, κ and α pooled over every (segment, theme), with intervals from a
jackknife over transcripts (themesim.metrics.agreement.intercoder). A set without coded
segments gets one row, status `unchecked`; a set the method's coder cannot label, status `no coder`.

Every row also names the coder's validation on outside data (the trained coder's nested
validation on ArgKP, from its head.json; empty for the other coders, whose ArgKP figures are
in docs/grounding.md), and each checked overall row says whether this coder reaches
TRUSTED_KAPPA (pooled κ) on the study's own human coding, cross-fitted by transcript
(`coder_trusted`): where no row does, the segment route is not to be led with.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from themesim.coder.trained import card_of
from themesim.metrics.agreement.intercoder import (
    ALL,
    OVERALL_METRICS,
    code_table,
    overall_table,
    unit_counts,
)

COLUMNS = [
    "method",
    "set",
    "coder",
    "status",
    "level",
    "theme_id",
    "name",
    "n_segments",
    "n_transcripts",
    "prevalence_human",
    "prevalence_coder",
    "n_human",
    "n_coder",
    "n_both",
    "kappa",
    "alpha",
    "percent_agreement",
    *OVERALL_METRICS[:-1],
    *[f"{m}_ci_{s}" for m in OVERALL_METRICS[:-1] for s in ("low", "high")],
    "ci_method",
    "coder_validation",
    "coder_validation_kappa",
    "coder_validation_kappa_ci_low",
    "coder_validation_accuracy",
    "coder_validation_majority",
    "coder_trusted",
]
TRUSTED_KAPPA = 0.4  # "moderate": the report's CODER_TRUSTED


def validation(coder: str) -> dict:
    """The coder's validation columns: the trained coder's nested ArgKP figures (head.json),
    empty for the others."""
    if not coder.startswith("trained"):
        return {}

    o = card_of()["validation"]["overall"]
    return {
        "coder_validation": f"ArgKP train, nested by topic: median κ {o['kappa_median']:.2f} "
        f"[{o['kappa_ci'][0]:.2f}, {o['kappa_ci'][1]:.2f}], accuracy {o['accuracy']:.2f} "
        f"(majority {o['majority']:.2f}), mAP strict {o['map_strict']:.2f}",
        "coder_validation_kappa": o["kappa_median"],
        "coder_validation_kappa_ci_low": o["kappa_ci"][0],
        "coder_validation_accuracy": o["accuracy"],
        "coder_validation_majority": o["majority"],
    }


def set_agreement(
    labels: pd.DataFrame, segments: pd.DataFrame, eligible: np.ndarray, themes: pd.DataFrame
) -> list[dict]:
    """The theme rows and the overall row of one set's coded against its assigned labels."""
    seg = segments[eligible].reset_index(drop=True)
    ids = themes["theme_id"].tolist()
    names = dict(zip(themes["theme_id"], themes["name"], strict=True))
    pos = {
        (t, int(s)): i
        for i, (t, s) in enumerate(zip(seg["transcript"], seg["segment"], strict=True))
    }
    mats = {}
    for source in ("coded", "assigned"):
        M = np.zeros((len(seg), len(ids)), dtype=bool)
        rows = labels[labels["source"] == source]
        for t, s, tid in rows[["transcript", "segment", "theme_id"]].itertuples(index=False):
            i = pos.get((t, int(s)))
            if i is not None:  # a human label on an excluded speaker's turn is not scored
                M[i, ids.index(tid)] = True
        mats[source] = M
    counts = unit_counts(mats["coded"], mats["assigned"], seg["transcript"].tolist(), ids)
    counts = counts[counts["scope"] == "all"]
    table = code_table(counts)
    pooled = table[table["group"] == ALL].set_index("code")
    over = overall_table(counts).set_index("scope").loc["all"]
    n_tr = int(seg["transcript"].nunique())
    out = []
    for tid in ids:
        r = pooled.loc[tid]
        out.append(
            {
                "level": "theme",
                "theme_id": tid,
                "name": names[tid],
                "n_segments": int(r["units"]),
                "n_transcripts": n_tr,
                "prevalence_human": float(r["prevalence_a"]),
                "prevalence_coder": float(r["prevalence_b"]),
                "n_human": int(r["coded_a"]),
                "n_coder": int(r["coded_b"]),
                "n_both": int(r["both"]),
                "kappa": float(r["kappa"]),
                "alpha": float(r["alpha"]),
                "percent_agreement": float(r["percent_agreement"]),
            }
        )
    tot = {k: int(sum(o[k] for o in out)) for k in ("n_human", "n_coder", "n_both")}
    cells = len(seg) * len(ids)
    overall = {
        "level": "overall",
        "theme_id": ALL,
        "name": "",
        "n_segments": len(seg),
        "n_transcripts": n_tr,
        "prevalence_human": tot["n_human"] / cells if cells else math.nan,
        "prevalence_coder": tot["n_coder"] / cells if cells else math.nan,
        **tot,
        "kappa": float(over["pooled_kappa"]),
        "alpha": float(over["pooled_alpha"]),
        "percent_agreement": float(over["percent_agreement"]),
        "ci_method": over["ci_method"],
    }
    for m in OVERALL_METRICS[:-1]:
        overall[m] = float(over[m])
        overall[f"{m}_ci_low"] = float(over[f"{m}_ci_low"])
        overall[f"{m}_ci_high"] = float(over[f"{m}_ci_high"])
    return out + [overall]


def agreement_table(
    methods: dict, labels: dict, themes: dict, segments: pd.DataFrame, exclude_speakers=()
) -> pd.DataFrame:
    """COLUMNS for every method and set. methods: method -> {sets, coded_sets, coders (set ->
    description, absent: the coder cannot label it)}; labels: (method, set) -> label table;
    themes: set -> theme table."""
    skip = {str(x).casefold() for x in exclude_speakers}
    eligible = ~segments["speaker"].astype(str).str.casefold().isin(skip).to_numpy()
    rows = []
    for m, spec in methods.items():
        for s in spec["sets"]:
            coder = spec["coders"].get(s)
            head = {"method": m, "set": s, "coder": coder or ""} | validation(coder or "")
            if coder is None:
                rows.append(head | {"status": "no coder", "level": "overall", "theme_id": ALL})
            elif s not in spec["coded_sets"]:
                rows.append(head | {"status": "unchecked", "level": "overall", "theme_id": ALL})
            else:
                body = set_agreement(labels[(m, s)], segments, eligible, themes[s])
                for r in body:
                    if r["level"] == "overall":
                        r["coder_trusted"] = bool(r["pooled_kappa"] >= TRUSTED_KAPPA)
                rows += [head | {"status": "checked"} | r for r in body]
    return pd.DataFrame(rows, columns=COLUMNS)
