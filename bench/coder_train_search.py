"""The search over trained coders on ArgKP train (docs/grounding.md, "The trained coder").

Each candidate (train.TrainSettings, as JSON) is trained without the held-out topics and
scored on them; the "none" head of each held-out topic is fitted on the other held-out topics
(coder/nested.py). `--folds K --only F` trains one fold of K (the search); `--only -1` every
fold (the nested validation of a final candidate). `zero` as a candidate is the untrained
MiniLM with the same head. One JSON line per candidate is appended to --out.

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python bench/coder_train_search.py \
        --folds 3 --only 0 --out /tmp/search.jsonl \
        '{"kind": "biencoder", "lora_r": 8, "lr": 2e-4, "epochs": 1}' zero
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from themesim.coder import argkp, nested, train
from themesim.embed.models import MINILM, resolve_model

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("candidates", nargs="+", help="TrainSettings as JSON, or zero")
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "argkp_train"))
    p.add_argument("--folds", type=int, default=3)
    p.add_argument("--only", type=int, default=0, help="the fold to train (-1: every fold)")
    p.add_argument("--out", required=True)
    args = p.parse_args()

    groups = argkp.load(args.data)
    folds = argkp.topic_folds(groups, args.folds)
    if args.only >= 0:
        folds = [folds[args.only]]
    held = [g for g in groups if any(g.topic in f for f in folds)]
    base = resolve_model(MINILM).path
    bottoms = {}  # top_layers: the lower layers' output of every text, shared by candidates

    def bottom_for(s):
        if s is None or s.kind != "biencoder":
            return None
        if s.top_layers not in bottoms:
            t0 = time.time()
            texts = [t for g in groups for t in g.kp_texts + g.arg_texts]
            model = train.load_base(base, "biencoder", 0)
            bottoms[s.top_layers] = train.Bottom(model, texts, s.top_layers, s.max_length)
            print(f"lower layers of every text: {time.time() - t0:.0f} s", flush=True)
        return bottoms[s.top_layers]

    for cand in args.candidates:
        t0 = time.time()
        if cand == "zero":
            s, name = None, "zero-shot MiniLM + head"
        else:
            s = train.TrainSettings(**json.loads(cand))
            name = s.name()
        print(f"== {name}", flush=True)

        def score_fold(tr, te, s=s):
            if s is None:
                model = train.load_base(base, "biencoder", 0)
                return train.score_groups(model, te, "biencoder")
            b = bottom_for(s)
            model, steps = train.train(tr, base, s, log=lambda m: print(m, flush=True), bottom=b)
            return train.score_groups(model, te, s.kind, bottom=b)

        scores = nested.held_out_scores(groups, folds, score_fold)
        scores = [scores[i] for i, g in enumerate(groups) if g in held]
        fig, *_ = nested.evaluate(held, scores)
        row = {
            "candidate": name,
            "settings": s.as_dict() if s else None,
            "folds": args.folds,
            "only": args.only,
            "seconds": round(time.time() - t0),
        } | fig
        print(json.dumps(row), flush=True)
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
