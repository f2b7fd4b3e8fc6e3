"""What each method of a study is: its kind (themesim.kinds), spec and rules."""

from __future__ import annotations

from themesim import kinds
from themesim.inputs import Setup, regex_of
from themesim.paths import CACHES


def kind(setup: Setup, method: str) -> str:
    return setup.study.methods[method]["kind"]


def kind_of(setup: Setup, method: str):
    """What the method's kind does (themesim.kinds): its capabilities and settings."""
    return kinds.get(kind(setup, method))


def spec(setup: Setup, method: str) -> dict:
    """The method's settings; its thresholds are apart (Study.thresholds)."""
    return setup.study.methods[method]


def methods_with(setup: Setup, capability: str) -> str:
    """Wildcard pattern of the methods whose kind has a capability."""
    return regex_of(setup.study.methods_with(capability))


def op(setup: Setup, method: str) -> str:
    return spec(setup, method).get("op", setup.study.op)


def similarity_rules(setup: Setup) -> list[str]:
    """The similarity rules the kinds name, in registry order (themesim.kinds)."""
    return list(dict.fromkeys(k.similarity_rule for k in kinds.KINDS.values()))


def similarity_methods(setup: Setup, rule: str) -> str:
    """Wildcard pattern of the methods whose similarity jobs run under that rule name
    (one matching nothing when no method of the study uses it)."""
    return regex_of(rule_methods(setup, rule))


def similarity_job(setup: Setup, rule: str) -> dict:
    """Threads, priority and resources of a similarity rule's jobs, from its kind."""
    return next(k.similarity_job for k in kinds.KINDS.values() if k.similarity_rule == rule)


def similarity_cache(setup: Setup, method: str):
    """The judgement cache of a kind that keeps one (an accumulating file, no output)."""
    return CACHES["judge"] if kind_of(setup, method).judge_cache else None


def rule_methods(setup: Setup, rule: str) -> list[str]:
    """The methods whose kind writes its similarity files by that rule."""
    return [m for m in setup.study.methods if kind_of(setup, m).similarity_rule == rule]
