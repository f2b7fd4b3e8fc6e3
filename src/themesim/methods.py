"""Kept so code written before themesim.kinds still imports; new code imports from there."""

from themesim.kinds import DEFAULT_METHODS, KINDS, method_defaults
from themesim.kinds.llm_judge import JUDGE_KEYS
from themesim.metrics.settings import DEFAULT_METRICS, metrics_settings

__all__ = [
    "DEFAULT_METHODS",
    "DEFAULT_METRICS",
    "JUDGE_KEYS",
    "KINDS",
    "method_defaults",
    "metrics_settings",
]
