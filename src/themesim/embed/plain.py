"""A sentence-transformers model of the plain form (a transformer, mean pooling, an optional
Normalize) run with transformers alone, without importing sentence-transformers.

Importing sentence-transformers also imports scikit-learn and the rest of its training code,
about 50 MB of the embedding job's peak memory. For the plain form this module computes the
same vectors bit for bit: the tokenizer called as sentence-transformers calls it, the
model's last hidden state, the masked mean and the normalisations in the same order, and the
rows of a forward pass sorted as sentence-transformers sorts them (tests/test_embed_plain.py
checks it against SentenceTransformer.encode). Any other model folder returns None from
`plain_config` and is loaded with sentence-transformers as before.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np

from themesim.embed.device import import_torch

TRANSFORMER = "sentence_transformers.models.Transformer"
POOLING = "sentence_transformers.models.Pooling"
NORMALIZE = "sentence_transformers.models.Normalize"
MEAN_ONLY = {
    "pooling_mode_cls_token": False,
    "pooling_mode_mean_tokens": True,
    "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False,
}
# Pooling keys that may be present with these values (or absent) in the plain form.
POOLING_NEUTRAL = {
    "pooling_mode_weightedmean_tokens": False,
    "pooling_mode_lasttoken": False,
    "include_prompt": True,
}


def _json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def plain_config(path) -> dict | None:
    """{"max_seq_length": n, "normalize": bool} when the folder is of the plain form, else None.

    The plain form: modules.json lists a Transformer at the folder's root, then a Pooling
    whose config is mean pooling only, then optionally a Normalize; sentence_bert_config.json
    holds nothing but max_seq_length and do_lower_case false; no default prompt.
    """
    root = Path(path)
    modules = _json(root / "modules.json")
    if not isinstance(modules, list) or len(modules) not in (2, 3):
        return None
    types = [m.get("type") if isinstance(m, dict) else None for m in modules]
    if types[:2] != [TRANSFORMER, POOLING] or types[2:] not in ([], [NORMALIZE]):
        return None
    if modules[0].get("path") not in ("", None):
        return None
    pooling = _json(root / str(modules[1].get("path", "")) / "config.json")
    if not isinstance(pooling, dict):
        return None
    for key, value in MEAN_ONLY.items():
        if pooling.get(key) is not value:
            return None
    extra = set(pooling) - set(MEAN_ONLY) - set(POOLING_NEUTRAL) - {"word_embedding_dimension"}
    if extra or any(pooling.get(k, v) != v for k, v in POOLING_NEUTRAL.items()):
        return None
    bert = _json(root / "sentence_bert_config.json")
    if not isinstance(bert, dict) or set(bert) - {"max_seq_length", "do_lower_case"}:
        return None
    if bert.get("do_lower_case") or not isinstance(bert.get("max_seq_length"), int):
        return None
    st = _json(root / "config_sentence_transformers.json") or {}
    if st.get("prompts") or st.get("default_prompt_name"):
        return None
    return {"max_seq_length": bert["max_seq_length"], "normalize": len(modules) == 3}


class PlainEncoder:
    """The parts of SentenceTransformer that embed.encode uses: tokenizer, max_seq_length,
    preprocess() and encode(), computed as sentence-transformers computes them.

    `encode` may run in several threads at once (embed.encode does, one torch thread each):
    the model is only read, and the tokenizer, whose settings each call sets, is locked."""

    concurrent = True

    def __init__(self, path, config: dict, device: str = "cpu"):
        from transformers import AutoModel, AutoTokenizer

        self._tokenizing = threading.Lock()

        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path).to(device).eval()
        self.max_seq_length = config["max_seq_length"]
        self.normalize = config["normalize"]
        self.device = device

    def preprocess(self, texts: list[str]) -> dict:
        with self._tokenizing:
            return self.tokenizer(
                list(texts),
                padding=True,
                truncation="longest_first",
                return_tensors="pt",
                max_length=self.max_seq_length,
            )

    def encode(self, texts: list[str], *, normalize_embeddings: bool = True, **_) -> np.ndarray:
        """One forward pass over `texts` (the caller batches); float32 rows in input order."""
        torch = import_torch()
        # Longest first, with numpy's argsort, as SentenceTransformer orders its batch.
        order = np.argsort([-len(t) for t in texts])
        with torch.inference_mode():
            features = self.preprocess([texts[i] for i in order])
            features = {k: v.to(self.device) for k, v in features.items()}
            tokens = self.model(**features, return_dict=True)[0]
            mask = features["attention_mask"].unsqueeze(-1).to(tokens.dtype)
            total = (tokens * mask).sum(dim=1, dtype=torch.float32)
            count = torch.clamp(mask.sum(dim=1, dtype=torch.float32), min=1e-9)
            emb = (total / count).to(tokens.dtype)
            if self.normalize:  # the model's Normalize module
                emb = torch.nn.functional.normalize(emb, p=2, dim=-1)
            if normalize_embeddings:  # encode(normalize_embeddings=True) normalises again
                emb = torch.nn.functional.normalize(emb, p=2, dim=1)
            emb = emb.cpu().float().numpy()
        out = np.empty_like(emb)
        out[order] = emb
        return out
