"""Like with like: which labels of two sets a grounding comparison uses (`grounding_basis`).

- `coder`: both sets' coder labels (source `assigned`): the same coder read both codebooks.
- `evidence`: both sets' own evidence (sources `coded` and `quote`), where both carry some.
- `mixed` (on request): each set's evidence when it has coded segments, else its quotes and
  coder labels — the labels of earlier releases, which compare one set's human coding with
  the other's automatic coding.
"""

from __future__ import annotations

import pandas as pd

from themesim.coder.settings import BASES

EVIDENCE = ("coded", "quote")
# The data side of a row without labels to compare (NaN, not the 0 an empty labelling gives).
DATA_METRICS_NOTE = (
    "no coder labels for {sets} under this method (its kind scores no segments, or "
    "grounding.assign is never)"
)


def basis_labels(
    labels: dict[str, pd.DataFrame],
    a: str,
    b: str,
    bases,
    coder_sets,
    assign: str = "uncoded",
) -> list[tuple[str, pd.DataFrame, pd.DataFrame, str]]:
    """(basis, labels of a, labels of b, note) per basis of `bases` that applies to the pair.

    coder: always (note names a set without coder labels, whose data side is then empty);
    evidence: when both sets carry evidence; mixed: always. When none applies (evidence only,
    one set without), the coder row stands in, so each comparison keeps a row."""
    out = []
    coder_sets = set(coder_sets)
    for basis in bases:
        if basis not in BASES:
            raise ValueError(f"unknown grounding basis {basis!r}")
        if basis == "coder":
            la, lb = (_only(labels[s], ("assigned",)) for s in (a, b))
            missing = [s for s in (a, b) if s not in coder_sets]
            note = DATA_METRICS_NOTE.format(sets=" and ".join(missing)) if missing else ""
            out.append(("coder", la, lb, note))
        elif basis == "evidence":
            la, lb = (_only(labels[s], EVIDENCE) for s in (a, b))
            if len(la) and len(lb):
                out.append(("evidence", la, lb, ""))
        else:
            out.append(("mixed", _mixed(labels[a], assign), _mixed(labels[b], assign), ""))
    if not out:
        return basis_labels(labels, a, b, ["coder"], coder_sets, assign)
    return out


def _only(df: pd.DataFrame, sources) -> pd.DataFrame:
    return df[df["source"].isin(sources)]


def _mixed(df: pd.DataFrame, assign: str) -> pd.DataFrame:
    """A set's labels as grounding had them before the coder: with coded segments, its
    evidence only (unless assign: always); without, everything it has."""
    if assign != "always" and (df["source"] == "coded").any():
        return _only(df, EVIDENCE)
    return df
