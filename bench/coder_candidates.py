"""Coder candidates against the demo's human coding (docs/grounding.md, "Choosing the coder").

Each candidate codes the `human` set's themes blind (evidence cross-fitted by transcript:
themesim.coder.assign) and is scored by the median over themes of Cohen's κ with the analyst's
coding (data/demo/coded/human_coded.csv), over the participant segments (the coder never codes
the interviewer). Thresholds are chosen on the tuning transcripts (p01, p03, p05) and the
figure that counts is the one on the other three, never tuned on.

Needs the demo's embeddings and labels (a run of
`snakemake --cores 2 results/segments/{minilm,mpnet,tfidf}/human.parquet`) and, for the LLM
rows, the coder's answers cached by `themesim.coder.llm` (results/cache/coder.sqlite, made by
this script with --llm; about 10 s a segment on 2 shared cores).

    PYTHONPATH=src python bench/coder_candidates.py [--llm] [--out bench/coder_candidates.csv]
    PYTHONPATH=src python bench/coder_candidates.py --trained   # the trained coder alone
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from themesim import kinds
from themesim.coder.assign import CoderOptions, decide, vector_labels
from themesim.io.themes import read_themes_parquet
from themesim.metrics.agreement.intercoder import kappa_counts

TUNE = ("p01_amira", "p03_grace", "p05_lin")
GRID = np.round(np.arange(0.0, 0.61, 0.02), 2)
TFIDF_GRID = np.round(np.arange(0.0, 0.31, 0.01), 2)
LLM_GRID = np.round(np.arange(0.0, 0.61, 0.02), 2)
SPEC = {
    "minilm": {"kind": "sentence_transformer"},
    "mpnet": {"kind": "sentence_transformer"},
    "tfidf": {"kind": "tfidf"},
}


def load(method: str):
    seg = pd.read_parquet("results/transcripts/segments.parquet").reset_index(drop=True)
    themes = read_themes_parquet("results/themes/human.parquet")
    lab = pd.read_parquet(f"results/segments/{method}/human.parquet")
    ids = themes["theme_id"].tolist()
    pos = {
        (t, int(s)): i
        for i, (t, s) in enumerate(zip(seg["transcript"], seg["segment"], strict=True))
    }
    H = np.zeros((len(seg), len(ids)), dtype=bool)
    for t, s, tid in lab.loc[
        lab["source"] == "coded", ["transcript", "segment", "theme_id"]
    ].itertuples(index=False):
        H[pos[(t, int(s))], ids.index(tid)] = True
    return seg, themes, H


def median_kappa(L: np.ndarray, H: np.ndarray, units: np.ndarray) -> float:
    a, h = L[units], H[units]
    both = (a & h).sum(axis=0)
    k = kappa_counts(both, a.sum(0) - both, h.sum(0) - both, len(a) - a.sum(0) - h.sum(0) + both)
    return float(np.nanmedian(k)) if np.isfinite(k).any() else float("nan")


def candidates():
    """(name, coder settings beside the threshold) of the embedding candidates."""
    out = []
    for kind in ("similarity", "exemplar"):
        for rule in ("all", "top1", "top1 centred"):
            for context in (0.0, 0.5):
                for fit in (False, True):
                    out.append(
                        (
                            f"{kind}, {rule}{', context 0.5' if context else ''}"
                            f"{', fitted thresholds' if fit else ''}",
                            CoderOptions(
                                coding=kind,
                                rule=rule.split()[0],
                                center=rule.endswith("centred"),
                                context=context,
                                fit_thresholds=fit,
                            ),
                        )
                    )
    return out


def score_rows(method: str, name: str, labels_at, grid, seg, H, elig) -> list[dict]:
    tr = seg["transcript"].to_numpy()
    tune = elig & np.isin(tr, TUNE)
    held = elig & ~np.isin(tr, TUNE)
    rows = []
    for th in grid:
        L = labels_at(th)
        rows.append(
            {
                "method": method,
                "candidate": name,
                "threshold": float(th),
                "kappa_all": median_kappa(L, H, elig),
                "kappa_tune": median_kappa(L, H, tune),
                "kappa_held_out": median_kappa(L, H, held),
                "prevalence": float(L[elig].mean()),
            }
        )
    return rows


def embedding_rows(method: str) -> list[dict]:
    seg, themes, H = load(method)
    elig = (seg["speaker"].astype(str).str.casefold() != "interviewer").to_numpy()
    kind = kinds.get(SPEC[method]["kind"])
    T, V = kind.segment_vectors(
        SPEC[method],
        themes,
        seg,
        f"results/embeddings/{method}/human.parquet",
        f"results/segment_embeddings/{method}.parquet",
    )
    grid = TFIDF_GRID if method == "tfidf" else GRID
    rows = []
    for name, opts in candidates():

        def at(th, opts=opts):
            return vector_labels(T, V, seg, elig, opts, threshold=th, evidence=H, coded=H)[0]

        rows += score_rows(method, name, at, grid, seg, H, elig)
    return rows


def llm_rows(cache: str, transcripts=None, server: str = "auto") -> list[dict]:
    """The LLM coder's rows; transcripts: code (and score) only these (the LLM takes ~10 s a
    segment on 2 shared cores, so a subset may be all there is time for)."""
    from themesim.coder.llm import CoderLLMSettings, code_segments

    seg, themes, H = load("minilm")
    elig = (seg["speaker"].astype(str).str.casefold() != "interviewer").to_numpy()
    if transcripts:
        elig &= seg["transcript"].isin(transcripts).to_numpy()
    rows = []
    for mode in ("logprob",):
        P = np.zeros(H.shape)
        idx = np.nonzero(elig)[0]
        P[idx] = code_segments(
            themes, seg, CoderLLMSettings(score_mode=mode, server=server), cache, rows=idx
        )
        S = P.T.copy()
        for rule in ("all", "top1", "top1 centred"):

            def at(th, S=S, rule=rule):
                return decide(S, elig, rule.split()[0], th, center=rule.endswith("centred"))

            rows += score_rows("llm", f"llm {mode}, {rule}", at, LLM_GRID, seg, H, elig)
    return rows


def trained_rows() -> list[dict]:
    """The trained coder (grounding.coder.kind trained): no threshold to tune, so one row
    whose κ on the tuning half is as untuned as on the held-out half."""
    from themesim.coder.trained import trained_labels

    seg, themes, H = load("minilm")
    elig = (seg["speaker"].astype(str).str.casefold() != "interviewer").to_numpy()
    L, _ = trained_labels(themes["text"].tolist(), seg["text"].tolist(), elig)
    return score_rows("trained", "trained (MiniLM + ArgKP LoRA, learned none)",
                      lambda th: L, [np.nan], seg, H, elig)  # fmt: skip


def best_by_tune(df: pd.DataFrame) -> pd.DataFrame:
    """Per method and candidate the threshold with the highest tuning-half κ (ties: the lowest
    threshold) and its κ on every part."""
    df = df.sort_values(["method", "candidate", "kappa_tune", "threshold"], ascending=[1, 1, 0, 1])
    return df.groupby(["method", "candidate"], sort=False).head(1).reset_index(drop=True)


def joint_sentence_transformer(df: pd.DataFrame) -> pd.DataFrame:
    """The sentence_transformer kind has one default threshold for MiniLM and mpnet: per
    candidate the threshold with the highest mean tuning-half κ of the two (ties: the
    lowest), and each method's κ there."""
    st = df[df["method"].isin(["minilm", "mpnet"])]
    mean = st.groupby(["candidate", "threshold"], sort=False)["kappa_tune"].mean().reset_index()
    mean = mean.sort_values(["candidate", "kappa_tune", "threshold"], ascending=[1, 0, 1])
    pick = mean.groupby("candidate", sort=False).head(1)[["candidate", "threshold"]]
    return st.merge(pick, on=["candidate", "threshold"]).sort_values(["candidate", "method"])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--llm", action="store_true", help="also the LLM coder (slow)")
    p.add_argument("--llm-transcripts", nargs="*", help="the LLM on these transcripts only")
    p.add_argument("--llm-server", default="auto", help="auto | native | python (local server)")
    p.add_argument("--cache", default="results/cache/coder.sqlite")
    p.add_argument("--trained", action="store_true", help="only the trained coder's row")
    p.add_argument("--out", default="bench/coder_candidates.csv")
    args = p.parse_args()
    if args.trained:
        print(pd.DataFrame(trained_rows()).round(3).to_string(index=False))
        return
    rows = []
    for m in SPEC:
        rows += embedding_rows(m)
    if args.llm:
        rows += llm_rows(args.cache, args.llm_transcripts, args.llm_server)
    df = pd.DataFrame(rows)
    df.to_csv(Path(args.out).with_name(Path(args.out).stem + "_grid.csv"), index=False)
    best = best_by_tune(df)
    best.to_csv(args.out, index=False)
    joint = joint_sentence_transformer(df)
    joint.to_csv(Path(args.out).with_name(Path(args.out).stem + "_st.csv"), index=False)
    pd.set_option("display.width", 200)
    print("Per method, threshold tuned on p01, p03, p05:")
    print(best.round(3).to_string(index=False))
    print("\nsentence_transformer: one threshold for MiniLM and mpnet (mean tuning κ):")
    print(joint.round(3).to_string(index=False))


if __name__ == "__main__":
    main()
