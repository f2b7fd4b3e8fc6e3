"""How a study's theme sets group: run groups (repeated runs of one generator), the
reference group of human analysts, and the comparisons the analysts' verdicts need."""

from __future__ import annotations

from themesim.errors import InputError, did_you_mean
from themesim.study.names import SET_NAME

GENERATED_GROUP = "generated"  # the run group of the LLM-generated runs (generate_themes)


def run_groups(config: dict, sets: dict[str, str], generated: dict) -> dict[str, list[str]]:
    """run_groups of the config, checked, plus the generated runs as a group of their own.

    Run consistency is only meaningful between repeated runs of one process, so a set is a
    run only when a group names it.
    """
    groups: dict[str, list[str]] = {}
    for name, members in (config.get("run_groups") or {}).items():
        where = f"config run_groups.{name}"
        if not SET_NAME.fullmatch(str(name)):
            raise InputError(
                where, f"group name {name!r} has unusable characters", "Use letters, digits, _ . -"
            )
        if generated and name == GENERATED_GROUP:
            raise InputError(
                where,
                f"{GENERATED_GROUP!r} is the group of the generate_themes runs",
                "Give this group another name",
            )
        members = [str(m) for m in members or []]
        if len(members) < 2:
            raise InputError(
                where,
                f"has {len(members)} set(s) but a run group needs at least 2",
                "List two or more theme sets in it, or remove the group",
            )
        for m in members:
            if m in generated:
                raise InputError(
                    where,
                    f"{m!r} is a generated run: those form the group {GENERATED_GROUP!r} by "
                    "themselves",
                    f"Remove {m!r} from {name!r}",
                )
        _check_set_names(where, members, sets)
        groups[str(name)] = members
    if len(generated) >= 2:
        groups[GENERATED_GROUP] = list(generated)
    return groups


def _check_set_names(where: str, members: list[str], sets) -> None:
    """InputError unless every member names a theme set, each once."""
    for m in members:
        if m not in sets:
            raise InputError(
                where,
                f"{m!r} is not a theme set{did_you_mean(m, sets)}",
                f"Use set names (file stem unless name: is given): {', '.join(sets)}",
            )
    if len(set(members)) != len(members):
        twice = next(m for m in members if members.count(m) > 1)
        raise InputError(where, f"{twice!r} is listed twice", "List each set once")


def reference_group(config: dict, sets: dict[str, str], reference: str) -> list[str]:
    """reference_group: checked set names, the reference first; [] when not given."""
    members = [str(m) for m in config.get("reference_group") or []]
    if not members:
        return []
    where = "config reference_group"
    _check_set_names(where, members, sets)
    if len(members) < 2:
        raise InputError(
            where,
            f"has {len(members)} set but a reference group needs at least 2",
            "List the reference and at least one more human theme set, or remove the key",
        )
    if reference not in members:
        raise InputError(
            where,
            f"does not include the reference set {reference!r}: the sets are compared on its "
            "themes",
            f"Add {reference!r} to reference_group, or make one of its sets the reference",
        )
    return [reference] + [m for m in members if m != reference]


def check_groups(analysts: list[str], run_groups: dict[str, list[str]]) -> None:
    """A set is an analyst or a run of one generator, never both, never of two groups."""
    seen: dict[str, str] = {}
    for name, members in run_groups.items():
        mixed = [m for m in members if m in analysts]
        if mixed:
            raise InputError(
                f"config run_groups.{name}",
                f"mixes analysts and runs: {', '.join(map(repr, mixed))} is in reference_group",
                "A run group holds runs of one generator: remove the analyst from it, or "
                "from reference_group",
            )
        for m in members:
            if m in seen:
                raise InputError(
                    f"config run_groups.{name}",
                    f"{m!r} is also in run group {seen[m]!r}: a set is in one group",
                    f"Remove {m!r} from one of the two groups",
                )
            seen[m] = name


def analyst_pairs(pairs, names: list[str], analysts: list[str]) -> list[tuple[str, str]]:
    """The comparisons a verdict needs beyond `pairs`: every analyst of the reference group
    as reference in turn (analyst vs each other set; docs/verdicts.md). A pair already made
    in either direction is not made again (its themes table has both sides)."""
    have = set(pairs) | {(b, a) for a, b in pairs}
    extra = []
    for r in analysts[1:]:
        for x in names:
            if x != r and (r, x) not in have:
                extra.append((r, x))
                have |= {(r, x), (x, r)}
    return extra


def primary_comparison(config: dict, thresholds: dict[str, list]) -> dict | None:
    """verdict.primary, checked: an active method, a route, and one of the method's
    thresholds fixed in the config (a `calibrated` threshold is fitted to the rated pairs,
    whose own uncertainty the verdict would not carry); None when the config names none.
    `thresholds`: each active method's configured thresholds."""
    given = (config.get("verdict") or {}).get("primary")
    if not given:
        return None
    where = "config verdict.primary"
    method = str(given["method"])
    if method not in thresholds:
        raise InputError(
            f"{where}.method",
            f"{method!r} is not an active method{did_you_mean(method, list(thresholds))}",
            f"Name one of {', '.join(thresholds)}",
        )
    route = given.get("route") or "matched"
    fixed = [float(t) for t in thresholds[method] if not isinstance(t, str)]
    threshold = given.get("threshold")
    if threshold is None:
        if not fixed:
            raise InputError(
                f"{where}.threshold",
                f"method {method!r} has no threshold fixed in the config (only calibrated)",
                "Give the method a numeric threshold, or name another method",
            )
        threshold = fixed[0]
    elif not any(abs(float(threshold) - t) < 1e-12 for t in fixed):
        raise InputError(
            f"{where}.threshold",
            f"{threshold} is not one of method {method!r}'s fixed thresholds "
            f"({', '.join(f'{t:g}' for t in fixed) or 'none'})",
            "Name one of them, or add it to the method's thresholds",
        )
    return {"method": method, "route": route, "threshold": float(threshold)}


def generators_of(sets: list[str], analysts: list[str], run_groups: dict) -> dict:
    """Every generator of the study: each run group, and each other set on its own."""
    grouped = {s for runs in run_groups.values() for s in runs}
    out = {name: list(runs) for name, runs in run_groups.items()}
    for s in sets:
        if s not in grouped and s not in analysts:
            out[s] = [s]
    return out
