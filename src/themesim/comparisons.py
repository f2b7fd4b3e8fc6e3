"""A method's `comparisons:`: the comparisons of the study it runs (all when null).

An expensive method (an LLM judge: n_a x n_b calls per comparison) can run on a few
comparisons while the others run on every one. The workflow asks Study.pairs_for(method) and
Study.sets_for(method) (themesim.study), never the study's own lists, for per-method work.
"""

from __future__ import annotations

from themesim.errors import InputError, did_you_mean

SEP = " vs "  # the canonical form: "A vs B"


def shown(pair) -> str:
    return f"{pair[0]}{SEP}{pair[1]}"


def _split(entry) -> tuple[str, str] | None:
    """(A, B) of an entry written "A vs B" or [A, B]; None when it is neither."""
    if isinstance(entry, str):
        words = entry.split()  # set names hold no spaces
        return (words[0], words[2]) if len(words) == 3 and words[1] == "vs" else None
    if isinstance(entry, list | tuple) and len(entry) == 2:
        if all(isinstance(p, str) and p.strip() for p in entry):
            return entry[0].strip(), entry[1].strip()
    return None


def method_pairs(name: str, entries, sets, pairs: list[tuple[str, str]]):
    """The study's pairs a method's `comparisons:` names, in the study's order.

    None (the default) is every pair. An entry naming no theme set, or a comparison the
    study does not make, stops the workflow at parse time naming the method and the entry.
    """
    if entries is None:
        return list(pairs)
    where = f"config methods.{name}.comparisons"
    listed = ", ".join(shown(p) for p in pairs)
    fix = f"List comparisons of this study ({listed}), or remove comparisons: for all of them"
    if not entries:
        raise InputError(where, "lists no comparison", fix)
    chosen = []
    for i, entry in enumerate(entries):
        pair = _split(entry)
        if pair is None:
            raise InputError(
                f"{where}[{i}]",
                f"{entry!r} is not a comparison",
                'Write it as "A vs B" (theme set names, e.g. "human vs llm_partial")',
            )
        for s in pair:
            if s not in sets:
                raise InputError(
                    f"{where}[{i}] ({shown(pair)})",
                    f"{s!r} is not a theme set of the study{did_you_mean(s, sets)}",
                    f"Use set names (file stem unless name: is given); {fix[0].lower()}{fix[1:]}",
                )
        if pair not in pairs:
            turned = (pair[1], pair[0]) in pairs
            problem = (
                f"the study compares {shown(pair[::-1])}, not {shown(pair)}"
                if turned
                else "is not a comparison of the study"
            )
            raise InputError(f"{where}[{i}] ({shown(pair)})", problem, fix)
        if pair in chosen:
            raise InputError(f"{where}[{i}] ({shown(pair)})", "is listed twice", "List it once")
        chosen.append(pair)
    return [p for p in pairs if p in chosen]


def pair_sets(sets, pairs) -> list[str]:
    """The sets those pairs compare, in the study's set order."""
    used = {s for p in pairs for s in p}
    return [s for s in sets if s in used]
