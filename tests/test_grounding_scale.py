"""Grounding decides its text pairs on the method's scale, as the metric tables do.

Eight segments of one transcript; A = h (a0..a3), B = l (b0..b3). Each theme labels one
segment: a0/b0 segment 0, a2/b3 segment 2, a3/b2 segment 3, a1 segment 1 but b1 segment 4.
So κ = 1 for (a0, b0), (a2, b3), (a3, b2) and κ = (6/8 - 50/64) / (1 - 50/64) = -1/7 for
(a1, b1). The raw Hungarian pairs at 0.5 keep (a1, b1); on the z scale at 2 they keep (a3, b2).
"""

import math

import numpy as np
import pandas as pd
import pytest
from helpers import write_theme_set, write_thresholds
from scipy.stats import spearmanr

from themesim.io.transcripts import write_segments_parquet
from themesim.metrics.calibration import resolve_thresholds
from themesim.similarity import write_similarity
from themesim.steps.grounding import grounding_tables
from themesim.steps.segment_labels import QUOTE_COLUMNS

IDS = {"h": ["a0", "a1", "a2", "a3"], "l": ["b0", "b1", "b2", "b3"]}
# The matrices of tests/test_plots.py's z heatmap: raw θ 0.5 keeps a1:b1, z θ 2 keeps a3:b2.
S = np.array(
    [[0.62, 0.30, 0.20, 0.10], [0.25, 0.55, 0.20, 0.15],
     [0.20, 0.15, 0.58, 0.60], [0.10, 0.20, 0.45, 0.35]]
)  # fmt: skip
W = {
    "h": np.array(
        [[1, 0.2, 0.3, 0.1], [0.2, 1, 0.25, 0.15], [0.3, 0.25, 1, 0.2], [0.1, 0.15, 0.2, 1]]
    ),
    "l": np.array(
        [[1, 0.3, 0.2, 0.3], [0.3, 1, 0.1, 0.4], [0.2, 0.1, 1, 0.25], [0.3, 0.4, 0.25, 1]]
    ),
}
SEGMENT_OF = {"a0": 0, "a1": 1, "a2": 2, "a3": 3, "b0": 0, "b1": 4, "b2": 3, "b3": 2}
RAW_KEPT = {("a0", "b0"), ("a1", "b1"), ("a2", "b3")}
Z_KEPT = {("a0", "b0"), ("a2", "b3"), ("a3", "b2")}


def _study(tmp_path, ids=IDS, S=S, W=W) -> dict:
    """The grounding rule's inputs for the one comparison h vs l."""
    segs = pd.DataFrame(
        {"transcript": "t", "segment": range(8), "speaker": "P", "text": "x", "start": 0.0}
    ).assign(end=1.0)
    write_segments_parquet(segs, tmp_path / "segments.parquet")
    paths = {"themes": {}, "labels": {}, "quotes": {}, "within": {}}
    for s, names in ids.items():
        paths["themes"][s] = write_theme_set(tmp_path / f"{s}.parquet", s, names)
        labels = pd.DataFrame(
            {
                "transcript": "t",
                "segment": [SEGMENT_OF.get(x, 5 + i) for i, x in enumerate(names)],
                "theme_id": names,
                "source": "coded",
                "score": 1.0,
            }
        )
        paths["labels"][s] = tmp_path / f"labels_{s}.parquet"
        labels.to_parquet(paths["labels"][s])
        paths["quotes"][s] = tmp_path / f"quotes_{s}.csv"
        pd.DataFrame(columns=QUOTE_COLUMNS).to_csv(paths["quotes"][s], index=False)
        paths["within"][s] = tmp_path / f"{s}__vs__{s}.parquet"
        write_similarity(paths["within"][s], W[s], names, names, {})
    write_similarity(tmp_path / "h__vs__l.parquet", S, ids["h"], ids["l"], {})
    return paths


def _run(tmp_path, paths, threshold, scale, calibration=(), codebooks=None):
    """Grounding with the thresholds.csv a metrics job would write for this threshold and
    scale (`calibrated` resolved from calibration = [summary, fit] as that job does)."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    name = scale.get("scale") or "cosine"
    values, sources = [threshold], None
    if threshold == "calibrated":
        summary = pd.read_csv(calibration[0]).iloc[0].to_dict()
        fit = pd.read_csv(calibration[1]) if name == "calibrated" else None
        values, sources = resolve_thresholds([threshold], summary, fit)
    thresholds = write_thresholds(
        tmp_path / "thresholds.csv",
        "m",
        values,
        scale=name,
        clamp=scale.get("clamp"),
        sources=sources,
    )
    grounding_tables(
        method="m",
        pairs=[("h", "l")],
        themes=paths["themes"],
        labels=paths["labels"],
        quotes=paths["quotes"],
        segments_path=tmp_path / "segments.parquet",
        similarities=[tmp_path / "h__vs__l.parquet"],
        thresholds_csv=thresholds,
        settings={"min_iou": 0.2, "seed": 0, "bootstrap": {"n": 0}},
        out_csv=out / "grounding.csv",
        out_pairs=out / "grounding_pairs.csv",
        out_long=[out / "h__vs__l.parquet"],
        scale={k: v for k, v in scale.items() if k in ("within", "fit")},
        **({"codebooks": codebooks} if codebooks else {}),
    )
    row = pd.read_csv(out / "grounding.csv").iloc[0]
    long = pd.read_parquet(out / "h__vs__l.parquet")
    kept = set(map(tuple, long.loc[long["text_pair"], ["a_id", "b_id"]].to_numpy().tolist()))
    return row, long, kept


def test_text_pairs_follow_the_z_decisions_not_raw(tmp_path):
    from themesim.metrics.sets.scales import z_scale

    paths = _study(tmp_path)
    row, long, kept = _run(tmp_path, paths, 0.5, {"scale": "cosine", "clamp": False})
    assert kept == RAW_KEPT and row["scale"] == "cosine" and "scale_flag" not in row
    # one transcript: the chance-corrected row figures are withheld; the pair table keeps κ
    assert np.isnan(row["text_pairs_share_kappa_ge_0_4"]) and row["withheld_reason"]
    text = long[long["text_pair"] & (long["grounding_basis"] == long["grounding_basis"].iloc[0])]
    assert (text["kappa"] >= 0.4).mean() == pytest.approx(2 / 3)  # (a1, b1) κ = -1/7

    z = {"scale": "z", "clamp": False, "within": paths["within"], "fit": None}
    row, long, kept = _run(tmp_path, paths, 2.0, z)
    assert kept == Z_KEPT
    assert row["scale"] == "z" and row["text_threshold"] == 2.0
    assert row["scale_flag"] != row["scale_flag"]  # NaN: z defined everywhere
    assert row["text_pairs"] == 3 and row["text_hungarian_f1"] == pytest.approx(0.75)
    text = long[long["text_pair"] & (long["grounding_basis"] == long["grounding_basis"].iloc[0])]
    assert text["kappa"].median() == pytest.approx(1.0) and (text["kappa"] >= 0.4).all()
    # S of the pair table and of text_data_spearman is the z matrix.
    Z, _ = z_scale(S, W["h"], W["l"])
    sim = long.set_index(["a_id", "b_id"])["similarity"]
    assert sim[("a3", "b2")] == pytest.approx(Z[3, 2])
    iou = np.zeros((4, 4))
    for i, a in enumerate(IDS["h"]):
        for j, b in enumerate(IDS["l"]):
            iou[i, j] = float(SEGMENT_OF[a] == SEGMENT_OF[b])
    rho_z = spearmanr(Z.ravel(), iou.ravel()).statistic
    assert rho_z != pytest.approx(spearmanr(S.ravel(), iou.ravel()).statistic)
    assert row["text_data_spearman"] == pytest.approx(rho_z)
    # The data side is the same on any scale: three segment-identical pairs.
    assert row["grounded_hungarian_n_matched"] == 3


def test_an_undefined_z_scores_no_text_side(tmp_path):
    # Three themes a set: fewer than 3 others, no spread; the data side is still scored.
    ids = {"h": ["a0", "a1", "a2"], "l": ["b0", "b1", "b3"]}
    w = np.array([[1, 0.2, 0.3], [0.2, 1, 0.25], [0.3, 0.25, 1]])
    s = np.array([[0.9, 0.1, 0.2], [0.1, 0.8, 0.2], [0.2, 0.1, 0.7]])
    paths = _study(tmp_path, ids, s, {"h": w, "l": w})
    z = {"scale": "z", "clamp": False, "within": paths["within"], "fit": None}
    row, long, kept = _run(tmp_path, paths, 2.0, z)
    assert row["scale"] == "z" and row["scale_flag"] == "a:too_small;b:too_small"
    assert not kept and long["similarity"].isna().all()
    for col in ("text_hungarian_f1", "text_pairs", "text_pairs_krippendorff_alpha"):
        assert math.isnan(row[col]), col
    assert math.isnan(row["text_data_spearman"])
    assert row["grounded_hungarian_n_matched"] == 2  # (a0, b0), (a2, b3)


def test_calibrated_scale_applies_a_p_match_threshold(tmp_path):
    paths = _study(tmp_path)
    fit = tmp_path / "isotonic.csv"
    # P(match) linear from score 0.3 (0) to 0.6 (1): 0.45 -> 0.5, 0.55 -> 5/6.
    pd.DataFrame({"score": [0.3, 0.6], "p_match": [0.0, 1.0]}).to_csv(fit, index=False)
    summary = tmp_path / "calibration.csv"
    pd.DataFrame({"f1_threshold": [0.5]}).to_csv(summary, index=False)
    cal = {"scale": "calibrated", "clamp": False, "within": {}, "fit": str(fit)}
    # P ≥ 0.5 keeps (a3, b2) at raw 0.45, which raw S against 0.5 would drop.
    row, long, kept = _run(tmp_path, paths, 0.5, cal, [summary, fit])
    assert kept == RAW_KEPT | {("a3", "b2")}
    assert row["scale"] == "calibrated" and row["text_threshold"] == 0.5
    sim = long.set_index(["a_id", "b_id"])["similarity"]
    assert sim[("a1", "b1")] == pytest.approx(5 / 6) and sim[("a0", "b0")] == 1.0
    # `calibrated` is the F1-max threshold (raw 0.5) as its P(match) 2/3, as comparisons.csv.
    row, _, kept = _run(tmp_path, paths, "calibrated", cal, [summary, fit])
    assert row["text_threshold"] == pytest.approx(2 / 3) and kept == RAW_KEPT
    # On the raw scale it stays the raw F1-max threshold.
    row, _, kept = _run(tmp_path, paths, "calibrated", {"scale": "cosine"}, [summary, fit])
    assert row["text_threshold"] == 0.5 and row["scale"] == "cosine" and kept == RAW_KEPT


def test_grounding_reports_agreement_across_codebooks(tmp_path):
    # this file's study: one transcript of 8 segments; both sets label
    # segments 0 (a0, b0), 2 (a2, b3) and 3 (a3, b2); a1 and b1 label segments alone. With an
    # identity isotonic fit P(match) is the raw score. Segments are units of length 1, so
    # l = 1 for the six values coded on a shared segment, Σ l* = 6, den = 6 − 6/6 = 5, e = 1/5
    # off the diagonal: Σ e δ = 2/5 · Σ over the 15 pairs of those values of 1 − s = 2/5 ·
    # (2.4 within h + 2.25 within l + 5.8 across) = 4.18; Σ o δ = 2 (0.38 + 0.40 + 0.55) =
    # 2.66; α_s = 1 − 2.66/4.18 = 4/11.
    paths = _study(tmp_path)
    cosine = {"scale": "cosine", "clamp": False}
    row, _, _ = _run(tmp_path, paths, 0.5, cosine)
    assert math.isnan(row["cu_alpha_codebooks"])  # no isotonic fit given: not computed
    fit = tmp_path / "isotonic.csv"
    pd.DataFrame({"score": [0.0, 1.0], "p_match": [0.0, 1.0]}).to_csv(fit, index=False)
    codebooks = {"fit": str(fit), "within": paths["within"]}
    row, _, _ = _run(tmp_path, paths, 0.5, cosine, codebooks=codebooks)
    assert row["cu_alpha_codebooks"] == pytest.approx(4 / 11)
    assert math.isnan(row["cu_alpha_codebooks_ci_low"])  # one transcript: no interval
