"""The note beside a method whose `comparisons:` restricts it to some of the study's."""

from __future__ import annotations


def ran_on_note(method: str, ran_on) -> str:
    """'judge ran on 1 of 6 comparisons (its comparisons: setting).', or '' for all.

    ran_on: (comparisons the method ran, comparisons of the study), or None.
    """
    if not ran_on:
        return ""
    n, total = (int(x) for x in ran_on)
    if n >= total:
        return ""
    return f"{method} ran on {n} of {total} comparisons (its comparisons: setting)."


def ran_on_notes(ran_on: dict | None) -> list[str]:
    """One note per restricted method, in the order given."""
    notes = [ran_on_note(m, r) for m, r in (ran_on or {}).items()]
    return [n for n in notes if n]
