"""Training the coder on labelled (passage, theme) pairs (argkp.Group), on the CPU.

Two encoders, both from the packaged MiniLM:

- `biencoder`: passages and themes embedded apart (cost grows with passages + themes),
  trained with sentence-transformers' MultipleNegativesRankingLoss: an argument against its
  label-1 key point, the topic's other key points as hard negatives (other topics' key
  points in the batch as easy ones). `lora_r` > 0 trains a LoRA adapter (peft) and leaves
  the base weights as they are; 0 fine-tunes every weight.
- `cross`: a cross-encoder (sentence-transformers' CrossEncoder, a fresh one-logit head) that
  reads each (argument, key point) pair, trained with its BinaryCrossEntropyLoss on the
  labelled pairs (cost grows with passages × themes).

Either gives a themes × passages score matrix per group; the "none" head (head.py) decides.
Determinism: seeds, torch's deterministic algorithms and a fixed thread count; batches are
drawn by numpy's seeded generator.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np

from themesim.coder.argkp import Group
from themesim.embed.device import import_torch

LORA_TARGETS = ["query", "key", "value", "dense"]


@dataclass(frozen=True)
class TrainSettings:
    kind: str = "biencoder"  # biencoder | cross
    lora_r: int = 8  # 0: every weight
    lora_alpha: int = 16
    lr: float = 2e-4
    epochs: float = 1.0
    batch: int = 32
    negatives: int = 3  # biencoder: hard negatives per anchor
    subsample: float = 1.0  # share of the training rows used (search only)
    top_layers: int = 2  # biencoder: only the top layers train (and carry LoRA)
    warmup: float = 0.1
    seed: int = 0
    threads: int = 2
    max_length: int = 128

    def name(self) -> str:
        what = f"lora{self.lora_r}" if self.lora_r else "full"
        if self.kind == "biencoder":
            what += f" top{self.top_layers}"
        sub = f" sub{self.subsample:g}" if self.subsample < 1 else ""
        return f"{self.kind} {what} lr{self.lr:g} ep{self.epochs:g}{sub}"

    def as_dict(self) -> dict:
        return asdict(self)


def setup(seed: int, threads: int):
    """torch seeded, deterministic, on `threads` threads; returns torch."""
    torch = import_torch()
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(threads)
    return torch


def biencoder_rows(groups: list[Group], negatives: int, rng) -> list[tuple[str, ...]]:
    """(argument, label-1 key point, `negatives` hard negatives): the group's key points that
    are not label 1 for the argument, in a seeded order and repeated round when fewer, topped
    up with the topic's other stance's key points where the group has none."""
    other = {}
    for g in groups:
        other.setdefault(g.topic, []).append(g)
    rows = []
    for g in groups:
        pool_other = [t for h in other[g.topic] if h is not g for t in h.kp_texts]
        for i, text in enumerate(g.arg_texts):
            pos = np.flatnonzero(g.truth[i])
            if not pos.size:
                continue
            neg = [g.kp_texts[j] for j in range(len(g.kp_texts)) if not g.truth[i, j]]
            if not neg:
                neg = pool_other
            if not neg:
                continue
            for j in pos:
                order = rng.permutation(len(neg))
                picks = [neg[order[k % len(neg)]] for k in range(negatives)]
                rows.append((text, g.kp_texts[j], *picks))
    return rows


def cross_rows(groups: list[Group]) -> list[tuple[str, str, float]]:
    """(argument, key point, label) of every labelled pair."""
    rows = []
    for g in groups:
        for i, j in zip(*np.nonzero(g.known), strict=True):
            rows.append((g.arg_texts[i], g.kp_texts[j], float(g.truth[i, j])))
    return rows


def load_base(path: str, kind: str, seed: int):
    """The packaged model as a SentenceTransformer, or as a CrossEncoder with a fresh head
    (seeded)."""
    torch = import_torch()
    torch.manual_seed(seed)
    if kind == "cross":
        from sentence_transformers import CrossEncoder

        return CrossEncoder(path, num_labels=1, device="cpu")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device="cpu")


def add_lora(model, s: TrainSettings, n_layers: int | None = None) -> None:
    """A LoRA adapter (peft) on the attention and dense layers; for the biencoder only on
    its top `top_layers` layers, the rest stays frozen."""
    from peft import LoraConfig

    kw = {}
    if s.kind == "biencoder" and n_layers:
        kw = {"layers_to_transform": list(range(n_layers - s.top_layers, n_layers))}
        kw["layers_pattern"] = "layer"
    cfg = LoraConfig(
        r=s.lora_r,
        lora_alpha=s.lora_alpha,
        lora_dropout=0.1,
        target_modules=LORA_TARGETS,
        modules_to_save=["classifier"] if s.kind == "cross" else None,
        **kw,
    )
    model.add_adapter(cfg)


def bert_of(model):
    """The transformers BertModel inside a SentenceTransformer."""
    return model.transformers_model


class Bottom:
    """The frozen lower layers' output for each distinct text, computed once: only the top
    layers train, so a training step runs those alone (on 2 shared cores a step through all
    six layers of MiniLM took 18 s, too slow for a search). Valid for any model that shares
    the base's lower layers (LoRA or training on the top layers only)."""

    def __init__(self, model, texts, top_layers: int, max_length: int, batch: int = 64):
        torch = import_torch()
        bert = bert_of(model)
        self.config, self.k = bert.config, len(bert.encoder.layer) - top_layers
        tok = model.tokenizer
        order = sorted(dict.fromkeys(texts), key=len)
        self.hidden = {}
        bert.eval()
        with torch.inference_mode():
            for i in range(0, len(order), batch):
                chunk = order[i : i + batch]
                enc = tok(
                    chunk, padding=True, truncation=True, max_length=max_length,
                    return_tensors="pt",
                )  # fmt: skip
                h = bert.embeddings(
                    input_ids=enc["input_ids"], token_type_ids=enc.get("token_type_ids")
                )
                mask = self.mask(h, enc["attention_mask"])
                for layer in bert.encoder.layer[: self.k]:
                    h = layer(h, mask)
                lengths = enc["attention_mask"].sum(dim=1).tolist()
                for t, h_t, n in zip(chunk, h, lengths, strict=True):
                    self.hidden[t] = h_t[:n].clone()

    def mask(self, h, attention_mask):
        from transformers.masking_utils import create_bidirectional_mask

        return create_bidirectional_mask(
            config=self.config, inputs_embeds=h, attention_mask=attention_mask
        )

    def embed(self, model, texts):
        """Unit sentence vectors (mean pooling, as the packaged model pools) of texts through
        the model's top layers."""
        torch = import_torch()
        hs = [self.hidden[t] for t in texts]
        L, d = max(h.shape[0] for h in hs), hs[0].shape[1]
        H = torch.zeros(len(hs), L, d)
        M = torch.zeros(len(hs), L, dtype=torch.long)
        for i, h in enumerate(hs):
            H[i, : h.shape[0]] = h
            M[i, : h.shape[0]] = 1
        mask = self.mask(H, M)
        for layer in bert_of(model).encoder.layer[self.k :]:
            H = layer(H, mask)
        m = M.unsqueeze(-1).to(H.dtype)
        emb = (H * m).sum(dim=1) / m.sum(dim=1)
        return torch.nn.functional.normalize(emb, dim=-1)

    def encode(self, model, texts, batch: int = 128) -> np.ndarray:
        torch = import_torch()
        order = sorted(dict.fromkeys(texts), key=lambda t: self.hidden[t].shape[0])
        out = {}
        with torch.inference_mode():
            for i in range(0, len(order), batch):
                chunk = order[i : i + batch]
                for t, v in zip(chunk, self.embed(model, chunk).numpy(), strict=True):
                    out[t] = v
        return np.array([out[t] for t in texts], dtype=np.float64)


def train(groups: list[Group], base_path: str, s: TrainSettings, log=print, bottom=None):
    """The trained model (adapter attached, not merged) and the step count."""
    from transformers import get_linear_schedule_with_warmup

    torch = setup(s.seed, s.threads)
    rng = np.random.default_rng(s.seed)
    model = load_base(base_path, s.kind, s.seed)
    if s.kind == "cross":
        from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

        if s.lora_r:
            add_lora(model, s)
        rows = cross_rows(groups)
        loss_fn = BinaryCrossEntropyLoss(model)
    else:
        from sentence_transformers.sentence_transformer.losses import (
            MultipleNegativesRankingLoss,
        )

        rows = biencoder_rows(groups, s.negatives, rng)
        loss_fn = MultipleNegativesRankingLoss(model)
        bert = bert_of(model)
        n = len(bert.encoder.layer)
        if bottom is None:
            t0 = time.time()
            bottom = Bottom(model, [t for r in rows for t in r], s.top_layers, s.max_length)
            log(f"  lower layers of {len(bottom.hidden)} texts: {time.time() - t0:.0f} s")
        if s.lora_r:
            add_lora(model, s, n)
            for name, p in model.named_parameters():
                p.requires_grad = "lora_" in name
        else:
            top = {f"encoder.layer.{i}." for i in range(n - s.top_layers, n)}
            for name, p in model.named_parameters():
                p.requires_grad = any(t in name for t in top)
    if s.subsample < 1:
        keep = np.sort(rng.permutation(len(rows))[: max(1, int(len(rows) * s.subsample))])
        rows = [rows[i] for i in keep]
    per_epoch = math.ceil(len(rows) / s.batch)
    steps = max(1, round(per_epoch * s.epochs))
    params = [p for p in model.parameters() if p.requires_grad]
    log(f"  {len(rows)} rows, {steps} steps, {sum(p.numel() for p in params)} trained weights")
    opt = torch.optim.AdamW(params, lr=s.lr, weight_decay=0.01)
    sched = get_linear_schedule_with_warmup(opt, int(steps * s.warmup), steps)
    model.train()
    t0, done, order = time.time(), 0, np.array([], dtype=int)
    while done < steps:
        if order.size == 0:
            order = rng.permutation(len(rows))
        batch, order = order[: s.batch], order[s.batch :]
        cols = list(zip(*(rows[i] for i in batch), strict=True))
        if s.kind == "cross":
            labels = torch.tensor(cols[2], dtype=torch.float32)
            loss = loss_fn([list(cols[0]), list(cols[1])], labels)
        else:
            texts = list(dict.fromkeys(t for col in cols for t in col))
            pos = {t: i for i, t in enumerate(texts)}
            emb = bottom.embed(model, texts)
            columns = [emb[[pos[t] for t in col]] for col in cols]
            loss = loss_fn.compute_loss_from_embeddings(columns, None)
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
        done += 1
        if done % 20 == 0 or done == steps:
            log(f"  step {done}/{steps} loss {loss.item():.4f} ({time.time() - t0:.0f} s)")
    model.eval()
    return model, steps


def score_groups(
    model, groups: list[Group], kind: str, batch: int = 64, bottom=None
) -> list[np.ndarray]:
    """Per group the key points × arguments scores: cosine (biencoder; through `bottom`'s
    cached lower layers when given) or the cross-encoder's logit."""
    torch = import_torch()
    out = []
    with torch.inference_mode():
        if kind == "cross":
            for g in groups:
                pairs = [(a, k) for k in g.kp_texts for a in g.arg_texts]
                s = model.predict(pairs, batch_size=batch, convert_to_numpy=True)
                out.append(np.asarray(s, dtype=np.float64).reshape(len(g.kp_texts), -1))
            return out
        texts = list(dict.fromkeys(t for g in groups for t in g.kp_texts + g.arg_texts))
        if bottom is not None:
            emb = bottom.encode(model, texts)
        else:
            emb = model.encode(
                texts, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True
            )
        pos = {t: i for i, t in enumerate(texts)}
        for g in groups:
            K = emb[[pos[t] for t in g.kp_texts]].astype(np.float64)
            A = emb[[pos[t] for t in g.arg_texts]].astype(np.float64)
            out.append(K @ A.T)
    return out
