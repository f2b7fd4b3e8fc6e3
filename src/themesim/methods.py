"""Built-in evaluation methods and their defaults (Raza et al. 2025 thresholds)."""

from __future__ import annotations

import copy

from themesim.embed.encode import MINILM, MPNET

KINDS = ("sentence_transformer", "tfidf", "precomputed", "abtt", "llm_judge")
# Settings of an llm_judge method that reach the judge (themesim.llm.judge.JudgeSettings).
JUDGE_KEYS = (
    "base_url",
    "model",
    "api_key_env",
    "prompt",
    "score_mode",
    "temperature",
    "max_tokens",
    "both_orders",
    "concurrency",
    "max_retries",
    "timeout_s",
    "seed",
    "n_ctx",
)

DEFAULT_METHODS: dict[str, dict] = {
    "minilm": {
        "kind": "sentence_transformer",
        "active": True,
        "description": "all-MiniLM-L6-v2 cosine similarity",
        "model": MINILM,
        "path": None,
        "thresholds": [0.56],
        "batch_size": 64,
        "device": "cpu",
        "dtype": "float32",
    },
    "mpnet": {
        "kind": "sentence_transformer",
        "active": True,
        "description": "all-mpnet-base-v2 cosine similarity",
        "model": MPNET,
        "path": None,
        "thresholds": [0.62],
        "batch_size": 32,
        "device": "cpu",
        "dtype": "float32",
    },
    "st5xxl": {
        "kind": "sentence_transformer",
        "active": False,
        "description": "sentence-T5-xxl cosine similarity (needs a GPU and a local copy)",
        "model": "sentence-transformers/sentence-t5-xxl",
        "path": None,
        "thresholds": [0.81],
        "batch_size": 8,
        "device": "cuda",
        "dtype": "float16",
    },
    "tfidf": {
        "kind": "tfidf",
        "active": True,
        "description": "TF-IDF cosine similarity, fitted on the union of the two sets (seed 002)",
        "thresholds": [0.2],
    },
    "minilm+abtt": {
        "kind": "abtt",
        "active": True,
        "description": "all-MiniLM-L6-v2 after all-but-the-top isotropy correction",
        "base": "minilm",
        "d": None,
        "thresholds": [0.3],
    },
    "judge": {
        "kind": "llm_judge",
        "active": False,
        "description": "LLM judge of conceptual overlap (local llama.cpp server by default)",
        "base_url": None,
        "model": None,
        "api_key_env": None,
        "thresholds": [0.5],
    },
    "precomputed": {
        "kind": "precomputed",
        "active": False,
        "description": "scores made elsewhere, read from CSV matrices",
        "dir": None,
        "thresholds": [0.5],
    },
}


# Study-wide settings of the metric families beyond coverage (METRICS.md).
DEFAULT_METRICS: dict = {
    "gamma": 0.15,
    "baseline_z": 2.0,
    "bootstrap": {"n": 1000, "seed": 0},
    "null_model": {"k": 100, "seed": 0, "alpha": 0.05},
    "transport": {"reg": 0.05, "reg_m": 1.0, "min_share": 0.2},
    "quality": {"alpha": 0.5, "beta": 0.5, "keywords_top_k": 5},
}


def metrics_settings(user: dict | None) -> dict:
    """DEFAULT_METRICS with the user's values merged in, one level deep."""
    out = copy.deepcopy(DEFAULT_METRICS)
    for key, value in (user or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key].update(value)
        else:
            out[key] = value
    return out


def method_defaults(name: str, spec: dict) -> dict:
    """A method's settings: the built-in defaults of its name or kind, then the user's.

    A method listed in the config runs unless the config says `active: false`.
    """
    base = copy.deepcopy(DEFAULT_METHODS.get(name, {}))
    kind = spec.get("kind", base.get("kind"))
    if base.get("kind") != kind:  # a built-in name used for another kind of method
        base = next((copy.deepcopy(s) for s in DEFAULT_METHODS.values() if s["kind"] == kind), {})
        base["description"] = f"{name} ({kind})"
    base["active"] = True
    if spec.get("scale") == "z" and "thresholds" not in spec:
        base["thresholds"] = [2.0]  # z above both within-set spreads (docs/thresholds.md)
    base.update(spec)
    return base
