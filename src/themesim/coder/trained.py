"""The trained coder (grounding.coder.kind `trained`): the packaged MiniLM with the LoRA
adapter shipped in weights/ (trained on ArgKP by `themesim train-coder`, MODEL_CARD.md
there), and its learned "none" head (head.py).

A set's themes (their text, `{name}: {description}`) and the segments are embedded with the
adapted model; each eligible segment's best theme by cosine is its choice, and the head says
whether to keep it or answer none. Method-independent: every method's coder labels are the
same, so the data figures of two methods differ only in their text side.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from themesim.coder.head import Head
from themesim.embed.device import set_threads
from themesim.embed.encode import sentence_transformer
from themesim.embed.models import MINILM, resolve_model
from themesim.errors import InputError

WEIGHTS = Path(__file__).resolve().parent / "weights" / "minilm-argkp"
ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors", "head.json")

_MODELS: dict = {}  # weights folder -> adapted SentenceTransformer (one load per process)


def check_weights(path: Path = WEIGHTS) -> Path:
    path = Path(path)
    missing = [f for f in ADAPTER_FILES if not (path / f).is_file()]
    if missing:
        raise InputError(
            f"trained coder {path}",
            f"lacks {', '.join(missing)}",
            "Reinstall themesim, or rebuild the weights with `themesim train-coder --data DIR`.",
        )
    return path


def head_of(path: Path = WEIGHTS) -> Head:
    return Head.from_dict(json.loads((check_weights(path) / "head.json").read_text())["head"])


def card_of(path: Path = WEIGHTS) -> dict:
    """head.json's record of how the weights were made and validated."""
    return json.loads((check_weights(path) / "head.json").read_text())


def model_of(path: Path = WEIGHTS):
    """The packaged MiniLM with the adapter loaded (peft), in eval mode."""
    key = str(check_weights(path))
    if key not in _MODELS:
        model = sentence_transformer(resolve_model(MINILM).path, device="cpu")
        model.load_adapter(key)
        model.eval()
        _MODELS[key] = model
    return _MODELS[key]


def embed(texts, path: Path = WEIGHTS, threads: int | None = None) -> np.ndarray:
    """Unit vectors of texts through the adapted model (float64 for the scores)."""
    set_threads(threads)
    model = model_of(path)
    v = model.encode(list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    return np.asarray(v, dtype=np.float64)


def trained_labels(
    theme_texts, segment_texts, eligible, path: Path = WEIGHTS, threads: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(segments × themes labels, themes × segments cosine) of one set: each eligible
    segment's best theme, or none where the head says so."""
    eligible = np.asarray(eligible, dtype=bool)
    T = embed(theme_texts, path, threads)
    V = embed(segment_texts, path, threads)
    S = T @ V.T
    L = np.zeros((len(V), len(T)), dtype=bool)
    idx = np.flatnonzero(eligible)
    if len(T) and idx.size:
        answer, _, _ = head_of(path).decide(S[:, idx])
        keep = answer >= 0
        L[idx[keep], answer[keep]] = True
    return L, S
