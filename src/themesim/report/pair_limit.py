"""`plots.max_pair_panels`: which comparisons a figure or the report still shows one by one.

Below the limit every comparison; above it only the reference's (the first ``limit`` of
them), next to a summary of all. Kept free of matplotlib: the report reads it too.
"""

from __future__ import annotations

from collections.abc import Sequence


def over_limit(n: int, limit: int | None) -> bool:
    """More comparisons than ``limit`` (None: no limit)."""
    return limit is not None and n > limit


def shown_pairs(
    pairs: Sequence[tuple[str, str]], reference: str | None, limit: int
) -> list[tuple[str, str]]:
    """The comparisons still shown one by one: the reference's, at most ``limit``."""
    return [p for p in pairs if reference is not None and p[0] == str(reference)][:limit]
