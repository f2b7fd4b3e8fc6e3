"""Texts to a model's inputs: token counts, every text tokenised once into a TokenTable (by the
model's Rust tokenizer in one batch where it gives what the preprocessing gives), and the
warning for texts longer than the model reads."""

from __future__ import annotations

import logging

import numpy as np
from tokenizers import Tokenizer

from themesim.embed.device import import_torch

log = logging.getLogger("themesim")


def preprocess(model, texts: list[str]) -> dict:
    """The model's tokenizer output for `texts`, padded to the longest (sentence-transformers
    before 6 calls it `tokenize`)."""
    fn = getattr(model, "preprocess", None) or model.tokenize
    return fn(list(texts))


def token_lengths(model, texts: list[str], chunk: int = 1024) -> list[int]:
    """Each text's token count as the model's own preprocessing makes it (after truncation)."""
    out: list[int] = []
    for i in range(0, len(texts), chunk):
        mask = preprocess(model, texts[i : i + chunk])["attention_mask"]
        out += mask.sum(dim=1).tolist()
    return out


class TokenTable:
    """Every text's per-token model inputs, stored without padding: text i's tokens are
    store[key][first[i] : first[i] + lengths[i]]; `fixed` holds the non-tensor values
    (e.g. sentence-transformers' `modality`). Called with the positions of texts of one
    token length, it gives their inputs as tokenising them together would."""

    def __init__(self, lengths, first, store: dict, fixed: dict):
        self.lengths = lengths
        self.first = first
        self.store = store
        self.fixed = fixed

    def __call__(self, idx) -> dict:
        torch = import_torch()
        at = self.first[np.asarray(idx)][:, None] + np.arange(self.lengths[idx[0]])
        return {key: torch.from_numpy(value[at]) for key, value in self.store.items()} | self.fixed


def token_table(model, texts: list[str], chunk: int = 1024):
    """Every text's model inputs from one tokenisation: (lengths, take), take a TokenTable,
    or None when the model's preprocessing returns anything else than per-token tensors and
    fixed values (then each pass tokenises its own texts). The model's own Rust tokenizer
    runs all texts in one parallel batch where it gives exactly what the model's
    preprocessing gives (checked on a sample); otherwise the preprocessing runs in chunks."""
    table = rust_token_table(model, texts)
    if table is not None:
        return table.lengths, table
    return _preprocess_table(model, texts, chunk)


def _preprocess_table(model, texts: list[str], chunk: int):
    """token_table through the model's preprocessing, in chunks of similar character
    length (little padding), the per-token tensors stored with the padding dropped."""
    torch = import_torch()
    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    lengths = [0] * len(texts)
    first = np.zeros(len(texts), dtype=np.int64)  # each text's first token in the store
    parts: dict[str, list] = {}
    fixed: dict = {}
    supported = True
    done = 0
    for c in range(0, len(order), chunk):
        idx = order[c : c + chunk]
        features = preprocess(model, [texts[i] for i in idx])
        mask = features["attention_mask"]
        counts = mask.sum(dim=1).tolist()
        starts = done + np.concatenate([[0], np.cumsum(counts[:-1], dtype=np.int64)])
        first[idx] = starts
        for i, n in zip(idx, counts, strict=True):
            lengths[i] = n
        done += sum(counts)
        if not supported:
            continue
        keep = mask.bool()
        for key, value in features.items():
            if torch.is_tensor(value) and value.shape == mask.shape:
                parts.setdefault(key, []).append(value[keep].numpy())
            elif torch.is_tensor(value) or fixed.setdefault(key, value) != value:
                supported = False
    if not supported:
        return lengths, None
    # numpy, not torch: a gather this small costs more in torch's thread pool than it does
    store = {key: np.concatenate(chunks) for key, chunks in parts.items()}
    return lengths, TokenTable(lengths, first, store, fixed)


# The model inputs a Rust tokenizer's Encoding carries, by the names models take them under.
ENCODING_FIELDS = {
    "input_ids": "ids",
    "token_type_ids": "type_ids",
    "attention_mask": "attention_mask",
}
CHECKED = 64  # texts of each kind (first, longest, with outer spaces) checked against preprocess


def rust_token_table(model, texts: list[str]) -> TokenTable | None:
    """token_table from the model's Rust (`tokenizers`) tokenizer in one batch: on a GPU
    machine the preprocessing's Python side, not the GPU, bounded the speed (40,000 texts:
    3.96 s of the 5.02 s, bench/README.md "GPU"). None where there is no such tokenizer or
    it differs from the model's preprocessing on the checked texts: the first, the longest
    (truncation) and those with outer white space or capitals (stripping, lowercasing)."""
    torch = import_torch()
    module = model[0] if hasattr(model, "__getitem__") else None
    tok = getattr(module, "tokenizer", None)
    backend = getattr(tok, "backend_tokenizer", None)
    if backend is None or not texts:
        return None
    longest = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))[:CHECKED]
    odd = [i for i, t in enumerate(texts) if t != t.strip() or t != t.lower()][:CHECKED]
    checked = sorted(set(range(min(CHECKED, len(texts)))) | set(longest) | set(odd))
    reference = preprocess(model, [texts[i] for i in checked])
    mask = reference.get("attention_mask")
    if not torch.is_tensor(mask):
        return None
    fixed, keys = {}, []
    for key, value in reference.items():
        if torch.is_tensor(value):
            if value.shape != mask.shape or key not in ENCODING_FIELDS:
                return None
            if value.dtype != torch.int64:  # the store holds int64
                return None
            keys.append(key)
        else:
            fixed[key] = value

    rust = Tokenizer.from_str(backend.to_str())  # a copy: the model's keeps its settings
    rust.no_padding()
    limit = getattr(model, "max_seq_length", None) or getattr(tok, "model_max_length", None)
    if limit and limit < 10**6:
        rust.enable_truncation(int(limit), direction=getattr(tok, "truncation_side", "right"))
    else:
        rust.no_truncation()
    encodings = rust.encode_batch(list(texts))
    lengths = [len(e.ids) for e in encodings]
    first = np.concatenate([[0], np.cumsum(lengths[:-1], dtype=np.int64)]).astype(np.int64)
    total = int(sum(lengths))
    store = {}
    for key in keys:
        field = ENCODING_FIELDS[key]
        flat = (v for e in encodings for v in getattr(e, field))
        store[key] = np.fromiter(flat, dtype=np.int64, count=total)
    table = TokenTable(lengths, first, store, fixed)
    keep = mask.bool()
    for row, i in enumerate(checked):
        if lengths[i] != int(keep[row].sum()):
            return None
        ours = table([i])
        for key in keys:
            if not ours[key][0].equal(reference[key][row][keep[row]]):
                return None
    return table


def warn_truncated(model, texts: list[str], name: str, lengths=None) -> list[int]:
    """Log which texts exceed the model's input length (they are cut, as every encoder does).

    Returns their positions. Only texts that may be longer are tokenised in full: with
    `lengths` (token counts after truncation) those that fill the model's input; else those
    of more than limit / 4 characters (a token covers at least one UTF-8 byte, at most 4 per
    character).
    """
    limit, tok = getattr(model, "max_seq_length", None), getattr(model, "tokenizer", None)
    if not limit or tok is None:
        return []
    if lengths is not None:
        maybe = [i for i, n in enumerate(lengths) if n >= limit]
    else:
        maybe = [i for i, t in enumerate(texts) if 4 * len(t) + 2 > limit]
    long = []
    for i in maybe:
        n = len(tok(texts[i], truncation=False, verbose=False)["input_ids"])
        if n > limit:
            long.append((i, n))
    if long:
        shown = "; ".join(f"text {i + 1} ({n} tokens, {texts[i][:40]!r}…)" for i, n in long[:3])
        log.warning(
            "%s reads at most %d tokens: %d text(s) are longer and only their first %d "
            "tokens are embedded: %s. Shorten those themes' descriptions, or use a "
            "text_template with fewer fields, if the rest matters",
            name,
            limit,
            len(long),
            limit,
            shown,
        )
    return [i for i, _ in long]
