"""Run-time flags: is a comparison within what the validation suite validated?

The `contract` column of comparisons.csv (and of grounding.csv) is empty where the row's
intervals are within the contract the suite certifies (docs/validity.md), else the reasons,
joined by ";":

- `few_themes`: a side has fewer than CONTRACT_MIN_THEMES themes (the suite's contract binds
  from 6; the rows below are measured and shown, not certified);
- `near_duplicates`: two themes of one set are as similar as a clear match: their within-set
  similarity (the matrix the within-set baselines read, on the method's scale) reaches the
  threshold plus the distinctiveness gap γ. Sets that repeat a topic are the suite's stress
  design (many-to-many overlaps), outside the contract;
- `no_match`: no pair reaches the threshold: the 95 % interval assumes independent themes,
  and nothing in the sample shows how matches would cluster (the `*_bound_low/_high`
  columns give the worst case);
- `few_transcripts` (grounding.csv): fewer transcripts than GROUNDING_MIN_TRANSCRIPTS, the
  fewest on which the suite measured the transcript jackknife.

`contract_note(flags)` is the sentence a report prints beside a flagged row.
"""

from __future__ import annotations

import numpy as np

from themesim.metrics.thresholds import matches

CONTRACT_MIN_THEMES = 6  # validate.core.MIN_CONTRACT_SIZE
GROUNDING_MIN_TRANSCRIPTS = 4  # the smallest G of the grounding area's grid

FLAGS = {
    "few_themes": f"a side has fewer than {CONTRACT_MIN_THEMES} themes",
    "near_duplicates": "a set holds near-duplicate themes (as similar as a clear match)",
    "no_match": "no match was seen (the 95 % interval assumes independent themes; "
    "the bound columns give the worst case)",
    "few_transcripts": f"fewer than {GROUNDING_MIN_TRANSCRIPTS} transcripts",
}


def near_duplicate_pairs(W, threshold: float, op: str = "ge", gamma: float = 0.0) -> list:
    """Index pairs (i, j), i < j, of themes of one set whose within-set similarity W[i, j]
    reaches threshold + gamma (op as the method's, metrics.thresholds.matches)."""
    if W is None:
        return []
    hit = matches(W, threshold + gamma, op) & np.isfinite(W)
    i, j = np.nonzero(np.triu(hit, k=1))
    return list(zip(i.tolist(), j.tolist(), strict=True))


def contract_flags(
    n_a: int,
    n_b: int,
    thresholds,
    n_match_pairs,
    *,
    W_a=None,
    W_b=None,
    op: str = "ge",
    gamma: float = 0.0,
) -> list[str]:
    """The `contract` value of each threshold's row: "" or flags joined by ";"."""
    thresholds = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    n_match_pairs = np.broadcast_to(np.asarray(n_match_pairs, dtype=np.float64), thresholds.shape)
    out = []
    for t, k in zip(thresholds, n_match_pairs, strict=True):
        flags = []
        if min(n_a, n_b) < CONTRACT_MIN_THEMES:
            flags.append("few_themes")
        if any(near_duplicate_pairs(W, t, op, gamma) for W in (W_a, W_b)):
            flags.append("near_duplicates")
        if k == 0:
            flags.append("no_match")
        out.append(";".join(flags))
    return out


def grounding_flags(n_transcripts: int) -> str:
    """The `contract` value of a grounding row."""
    return "few_transcripts" if n_transcripts < GROUNDING_MIN_TRANSCRIPTS else ""


def contract_note(flags) -> str:
    """The report's note for a row's `contract` value: "" within the contract, else one
    sentence naming each reason ("Outside what the validation suite certified: ...")."""
    if flags is None or (isinstance(flags, float) and flags != flags):
        return ""
    names = [f for f in str(flags).split(";") if f]
    if not names:
        return ""
    reasons = "; ".join(FLAGS.get(f, f) for f in names)
    return f"Outside what the validation suite certified: {reasons} (docs/validity.md)."
