"""How much a judge score depends on the request before it, and on the themes' order.

    PYTHONPATH=src .venv/bin/python bench/judge_order.py [--out DIR] [--threads 2]

The demo's judge requests (human x llm_partial and the rated pairs: 89 distinct, as the
workflow's judge job asks them) go to one local llama-server, one at a time, in two orders —
the job's sorted stream and a seeded shuffle — once with `cache_prompt: true` (the slot keeps
the previous prompt's KV cache and evaluates only what follows the shared prefix) and once
with `cache_prompt: false` (every prompt from an empty slot). Per setting: how many scores
differ between the two orders and by how much, the prompt tokens llama-server evaluated
(`timings.prompt_n`) and the seconds. Then, order-free, each pair with its themes swapped
(B before A), as `both_orders` asks: the position bias of the prompt. Nothing is cached.

Writes DIR/summary.json and DIR/scores.csv (setting, text_a, text_b, score_1, score_2: the
sorted and the shuffled order's score, or for `theme_order` A first and B first).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import requests

REPO = Path(__file__).resolve().parents[1]


def demo_requests() -> tuple[list[tuple[str, str]], set[tuple[str, str]], set[tuple[str, str]]]:
    """(the sorted stream, the comparison's pairs, the rated pairs), as the judge job asks."""
    from themesim.io.rated_pairs import rated_pair_columns
    from themesim.io.themes import read_theme_file

    themes = REPO / "data" / "demo" / "themes"
    a = read_theme_file(themes / "human.csv", set_name="human")["text"].tolist()
    b = read_theme_file(themes / "llm_partial.md", set_name="llm_partial")["text"].tolist()
    cells = {(x, y) for x in a for y in b}
    rated = set(zip(*rated_pair_columns(REPO / "data" / "demo" / "rated_pairs.csv"), strict=True))
    return sorted(cells | rated), cells, rated


def ask(url: str, body: dict) -> tuple[float, int, float]:
    """(score, prompt tokens evaluated, seconds) of one request."""
    from themesim.llm.client import top_logprobs
    from themesim.llm.judge_ask import parse_logprob_score

    t = time.perf_counter()
    r = requests.post(url, json=body, timeout=600)
    r.raise_for_status()
    data = r.json()
    score = parse_logprob_score(top_logprobs(data["choices"][0]))
    return score, int(data.get("timings", {}).get("prompt_n", -1)), time.perf_counter() - t


def run(url, settings, model, prompt, pairs) -> dict:
    from themesim.llm.judge_ask import _request_body

    out = {"score": {}, "prompt_n": 0, "seconds": 0.0}
    for a, b in pairs:
        body = _request_body(settings, model, prompt, a, b, True)
        s, n, sec = ask(url, body)
        out["score"][(a, b)] = s
        out["prompt_n"] += n
        out["seconds"] += sec
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("bench-judge-order"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0, help="of the shuffled order")
    args = ap.parse_args()
    from themesim.llm.judge_settings import JudgeSettings
    from themesim.llm.prompts import load_prompt
    from themesim.llm.server import LlamaServer, packaged_model_name, packaged_model_path

    stream, cells, rated = demo_requests()
    shuffled = list(stream)
    random.Random(args.seed).shuffle(shuffled)
    base = JudgeSettings()
    prompt = load_prompt(base.prompt, base.score_mode)
    args.out.mkdir(parents=True, exist_ok=True)
    rows, summary = [], {}
    with LlamaServer(
        packaged_model_path(), n_ctx=base.n_ctx, threads=args.threads, backend="native"
    ) as srv:
        url = f"{srv.base_url}/chat/completions"
        model = packaged_model_name()
        print(f"{srv.backend_id}; {len(stream)} requests ({len(cells)} cells, {len(rated)} rated)")
        for cache_prompt in (True, False):
            s = replace(base, server_id=srv.backend_id, cache_prompt=cache_prompt)
            got = {
                name: run(url, s, model, prompt, order)
                for name, order in (("sorted", stream), ("shuffled", shuffled))
            }
            x = np.array([got["sorted"]["score"][p] for p in stream])
            y = np.array([got["shuffled"]["score"][p] for p in stream])
            d = np.abs(x - y)
            crossed = int(np.sum((x >= 0.5) != (y >= 0.5)))
            key = f"cache_prompt={str(cache_prompt).lower()}"
            summary[key] = {
                "requests": len(stream),
                "scores_differing": int(np.sum(x != y)),
                "max_abs_difference": float(d.max()),
                "median_abs_difference_of_those": float(np.median(d[d > 0])) if d.any() else 0.0,
                "crossing_0.5": crossed,
                "prompt_tokens_evaluated": {k: v["prompt_n"] for k, v in got.items()},
                "seconds": {k: round(v["seconds"], 1) for k, v in got.items()},
            }
            print(key, json.dumps(summary[key]))
            for p, xi, yi in zip(stream, x, y, strict=True):
                rows.append(
                    {"setting": key, "text_a": p[0], "text_b": p[1], "score_1": xi, "score_2": yi}
                )
            if not cache_prompt:
                free = got["sorted"]["score"]
        # Position bias: each pair with B first, order-free.
        s = replace(base, server_id=srv.backend_id, cache_prompt=False)
        swapped = run(url, s, model, prompt, [(b, a) for a, b in stream])["score"]
        ab = np.array([free[p] for p in stream])
        ba = np.array([swapped[(b, a)] for a, b in stream])
        for name, sel in (("all", stream), ("rated", sorted(rated)), ("cells", sorted(cells))):
            i = [stream.index(p) for p in sel]
            diff = ab[i] - ba[i]
            summary[f"theme_order_{name}"] = {
                "pairs": len(i),
                "mean_a_first_minus_b_first": float(diff.mean()),
                "mean_abs_difference": float(np.abs(diff).mean()),
                "max_abs_difference": float(np.abs(diff).max()),
                "crossing_0.5": int(np.sum((ab[i] >= 0.5) != (ba[i] >= 0.5))),
                "spearman": float(pd.Series(ab[i]).corr(pd.Series(ba[i]), method="spearman")),
            }
            print(f"theme order ({name})", json.dumps(summary[f"theme_order_{name}"]))
        for p, x, y in zip(stream, ab, ba, strict=True):
            rows.append(
                {
                    "setting": "theme_order",
                    "text_a": p[0],
                    "text_b": p[1],
                    "score_1": x,
                    "score_2": y,
                }
            )
    pd.DataFrame(rows).to_csv(args.out / "scores.csv", index=False)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
