"""The trained coder's cost at a real study's size: coding N passages (default 20,000)
against 20 themes with grounding.coder.kind `trained`, against embedding the same passages
with the same base model (the packaged MiniLM, through the pipeline's own encoder), on the
threads given (default 2). A cross-encoder's cost is estimated from timing 500 of its pairs.

Passages are seeded synthetic sentences of 8–40 words (no data needed).

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python bench/coder_cost.py [--passages 20000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

WORDS = (
    "money rent work family children school health doctor hospital time job pay bills "
    "help support friends home move city government benefit care worry hope future plan "
    "night day week month year talk feel think know want need try find lose keep start stop "
    "because when after before about with without never always often sometimes really very"
).split()


def passages(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        k = int(rng.integers(8, 41))
        out.append(f"{i} " + " ".join(rng.choice(WORDS, k)) + ".")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--passages", type=int, default=20000)
    p.add_argument("--themes", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cross", action="store_true", help="also time a cross-encoder's pairs")
    args = p.parse_args()
    from themesim.coder import trained
    from themesim.embed.encode import encode
    from themesim.embed.models import MINILM, resolve_model

    texts = passages(args.passages)
    themes = [f"Theme {j}: " + " ".join(passages(1, seed=100 + j)[0].split()[1:12])
              for j in range(args.themes)]  # fmt: skip
    src = resolve_model(MINILM)
    encode(texts[:64], src, threads=args.threads)  # load once, outside the timing
    trained.embed(themes[:2], threads=args.threads)
    t0 = time.time()
    encode(texts, src, threads=args.threads)
    t_embed = time.time() - t0
    t0 = time.time()
    L, _ = trained.trained_labels(themes, texts, np.ones(len(texts), bool), threads=args.threads)
    t_code = time.time() - t0
    print(
        f"{args.passages} passages, {args.themes} themes, {args.threads} threads: embedding "
        f"with MiniLM {t_embed:.1f} s; coding with the trained coder {t_code:.1f} s "
        f"({t_code / t_embed:.2f}× embedding; {int(L.any(axis=1).sum())} passages coded)"
    )
    if args.cross:
        from sentence_transformers import CrossEncoder

        ce = CrossEncoder(src.path, num_labels=1, device="cpu")
        pairs = [(t, th) for t in texts[:25] for th in themes]
        t0 = time.time()
        ce.predict(pairs, batch_size=64)
        per_pair = (time.time() - t0) / len(pairs)
        full = per_pair * args.passages * args.themes
        print(
            f"a MiniLM cross-encoder: {per_pair * 1000:.1f} ms a pair, so about {full:.0f} s for "
            f"every pair ({full / t_embed:.0f}× embedding); re-ranking the top 2: "
            f"{per_pair * args.passages * 2 / t_embed:.1f}× embedding on top of the bi-encoder"
        )


if __name__ == "__main__":
    main()
