"""The checks of `themesim agree`'s codings once read, so that no figure can mislead: every
coder codes, every coder uses the codes the others use; overlapping selections and copied
codings are said once (io/two_codings.py)."""

from __future__ import annotations

import numpy as np

from themesim.errors import InputError
from themesim.io.codings import Codings


def _at(row) -> str:
    """Where a span came from: a file's row, or a project's PlainTextSelection."""
    if str(row["file"]).lower().endswith(".qdpx"):
        return f"{row['file']}: PlainTextSelection {row['row']}"
    return f"{row['file']}, row {row['row']}"


def check_empty_coders(c: Codings) -> None:
    for k, name in enumerate(c.coders):
        if not (c.spans["coder"] == k).any():
            files = c.sources.get(k) or "themesim agree"
            raise InputError(
                files,
                f"coder {name!r} has no coded segments",
                "Export that coder's codings again, or leave the coder out.",
            )


def check_codes(c: Codings, allow_unmatched: bool) -> None:
    used = [set(c.spans.loc[c.spans["coder"] == k, "code"]) for k in range(len(c.coders))]
    everyone = set.union(*used)
    if not allow_unmatched:
        for code in c.codes:
            if code not in everyone:
                continue
            users = [k for k in range(len(c.coders)) if code in used[k]]
            if len(users) == len(c.coders):
                continue
            first = c.spans[c.spans["code"] == code].iloc[0]
            by = " and ".join(c.coders[k] for k in users)
            not_by = ", ".join(c.coders[k] for k in range(len(c.coders)) if k not in users)
            raise InputError(
                _at(first),
                f"code {code!r} is used by {by} only"
                + (f", not by {not_by}" if len(c.coders) > 2 else ""),  # fmt: skip
                "Rename it to the code the other coders use, or pass --allow-unmatched-codes "
                "to score it as never applied by them.",
            )
    c.codes = [code for code in c.codes if code in everyone]


def note_copies(c: Codings) -> None:
    """Two coders with the very same selections are most likely one coding given twice."""
    keys = ["document", "code", "start", "end"]
    seen: dict[frozenset, int] = {}
    for k in range(len(c.coders)):
        mine = c.spans.loc[c.spans["coder"] == k, keys]
        sig = frozenset(mine.itertuples(index=False, name=None))
        if sig in seen and len(sig) > 1:
            c.notes.append(
                f"coders {c.coders[seen[sig]]!r} and {c.coders[k]!r} made the very same "
                f"{len(sig)} selections: if one is a copy of the other, their agreement of 1 "
                "says nothing"
            )
        seen.setdefault(sig, k)


def note_overlaps(c: Codings) -> None:
    """A coder's overlapping selections of one code are their union; say so once."""
    s = c.spans.sort_values(["coder", "document", "code", "start", "end"], kind="stable")
    same = (
        (s["coder"].to_numpy()[1:] == s["coder"].to_numpy()[:-1])
        & (s["document"].to_numpy()[1:] == s["document"].to_numpy()[:-1])
        & (s["code"].to_numpy()[1:] == s["code"].to_numpy()[:-1])
    )
    if not same.any():
        return
    key = s["coder"].astype(str) + "\0" + s["document"] + "\0" + s["code"]
    reach = s["end"].groupby(key.to_numpy(), sort=False).cummax().to_numpy()
    hit = np.flatnonzero(same & (s["start"].to_numpy()[1:] < reach[:-1])) + 1
    if not len(hit):
        return
    r = s.iloc[hit[0]]
    c.notes.append(
        f"{len(hit)} selection(s) overlap another selection of the same code by the same coder "
        f"and are taken as their union (first: {_at(r)}, "
        f"{r['code']!r} {r['start']}-{r['end']})"
    )
