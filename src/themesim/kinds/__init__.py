"""Method kinds: one module each, registered here; the workflow asks KINDS what a kind does.

Adding a kind: a module with a Kind subclass (themesim.kinds.base), its KIND in the tuple
below, and its keys under methods: in workflow/schemas/config.schema.yaml (docs/kinds.md).
"""

from __future__ import annotations

import copy

from themesim.kinds import abtt, llm_judge, precomputed, sentence_transformer, tfidf
from themesim.kinds.base import COMMON_KEYS, Kind
from themesim.metrics.settings import Z_THRESHOLD

KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        sentence_transformer.KIND,
        tfidf.KIND,
        precomputed.KIND,
        abtt.KIND,
        llm_judge.KIND,
    )
}

# Built-in methods by name (Raza et al. 2025 thresholds): the config may list them by name.
DEFAULT_METHODS: dict[str, dict] = {
    name: {"kind": k.name, "active": own.get("active", True), "description": own["description"]}
    | copy.deepcopy(k.defaults)
    | {key: v for key, v in own.items() if key not in ("active", "description")}
    for k in KINDS.values()
    for name, own in k.builtins.items()
}


def get(kind: str) -> Kind:
    """The kind of that name (config parsing has checked it is one of KINDS)."""
    return KINDS[kind]


def method_defaults(name: str, spec: dict) -> dict:
    """A method's settings: the built-in defaults of its name or kind, then the user's.

    A method listed in the config runs unless the config says `active: false`.
    """
    base = copy.deepcopy(DEFAULT_METHODS.get(name, {}))
    kind = spec.get("kind", base.get("kind"))
    if base.get("kind") != kind:  # a built-in name used for another kind of method
        base = {"kind": kind} | copy.deepcopy(KINDS[kind].defaults) if kind in KINDS else {}
        base["description"] = f"{name} ({kind})"
    base["active"] = True
    if spec.get("scale") == "z" and "thresholds" not in spec:
        base["thresholds"] = [Z_THRESHOLD]  # z above both within-set spreads
    base.update(spec)
    return base


__all__ = ["COMMON_KEYS", "DEFAULT_METHODS", "KINDS", "Kind", "get", "method_defaults"]
