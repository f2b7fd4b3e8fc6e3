"""Agreement of the pooled null (P salad texts per B set) with the old K whole salad sets.

For every comparison of a config, per A theme: the old permutation p = (1 + #{null best ≥
obs}) / (K + 1) over K salad sets and the new pool p (themesim.metrics.sets.nulls.null_pvalues),
each BH-adjusted per comparison. Prints the Spearman rank correlation of the p-values over
all A themes of all comparisons, the share of equal BH decisions at q ≤ alpha, each
comparison's significant_match_rate under both, and the null texts each scheme embeds.

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python bench/null_agreement.py \
        [--config config/config.yaml] [--methods minilm,tfidf] [--k 100] [--pool 200]

Run from the repository root. Embeddings go to a temporary cache (the shared one is left alone).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml
from scipy.stats import spearmanr

from themesim.config import prepare
from themesim.io.themes import read_theme_file
from themesim.metrics.comparison import Settings
from themesim.metrics.method_scale import on_scale
from themesim.metrics.sets.nulls import (
    bh_qvalues,
    null_pvalues,
    significant_match_rate,
    word_salad_pool,
    word_salad_sets,
)


def old_pvalues(obs: np.ndarray, null_best: np.ndarray) -> np.ndarray:
    """The K-set permutation p-value the pool replaced."""
    return (1.0 + (null_best >= obs[None, :]).sum(axis=0)) / (null_best.shape[0] + 1.0)


class Scorer:
    """S of A's texts against any list of texts, for one method (embedding or TF-IDF)."""

    def __init__(self, name: str, spec: dict, cache: Path, threads: int):
        self.name, self.spec, self.cache, self.threads = name, spec, cache, threads
        self.settings = Settings(
            thresholds=spec["thresholds"],
            scale=spec.get("scale", "cosine"),
            clamp=bool(spec.get("clamp", False)),
        )

    def __call__(self, a_texts: list[str], texts: list[str], n_b: int) -> np.ndarray:
        """n_a x len(texts); TF-IDF is fitted on A plus each run of n_b texts (one salad set),
        as the metrics job does, embeddings encode all texts at once."""
        if self.spec["kind"] == "tfidf":
            from themesim.similarity import tfidf

            parts = [tfidf(a_texts, texts[i : i + n_b]) for i in range(0, len(texts), n_b)]
            return on_scale(np.hstack(parts), self.settings)
        from themesim.embed.encode import encode_with
        from themesim.similarity import cosine

        emb, _ = encode_with(self.spec, a_texts + texts, self.threads, cache=self.cache)
        return on_scale(cosine(emb[: len(a_texts)], emb[len(a_texts) :]), self.settings)


def agreement(study, tables, scorer, *, k: int, pool: int, seed: int, pool_seed: int, alpha):
    rows, p_old_all, p_new_all, d_old, d_new = [], [], [], [], []
    for a, b in study.pairs:
        a_texts, b_texts = tables[a]["text"].tolist(), tables[b]["text"].tolist()
        n_b = len(b_texts)
        obs = scorer(a_texts, b_texts, n_b).max(axis=1)
        salads = word_salad_sets(b_texts, k, seed)
        flat = scorer(a_texts, [t for s in salads for t in s], n_b)  # n_a x (K n_b)
        null_best = np.stack([flat[:, i * n_b : (i + 1) * n_b].max(axis=1) for i in range(k)])
        p_old = old_pvalues(obs, null_best)
        texts, _ = word_salad_pool(b_texts, pool, pool_seed)
        p_new = null_pvalues(obs, scorer(a_texts, texts, n_b), n_b)
        q_old, q_new = bh_qvalues(p_old), bh_qvalues(p_new)
        p_old_all.append(p_old)
        p_new_all.append(p_new)
        d_old.append(q_old <= alpha)
        d_new.append(q_new <= alpha)
        rows.append(
            (
                f"{a} vs {b}",
                significant_match_rate(q_old, alpha),
                significant_match_rate(q_new, alpha),
                float(np.mean((q_old <= alpha) == (q_new <= alpha))),
            )
        )
    p_old, p_new = np.concatenate(p_old_all), np.concatenate(p_new_all)
    equal = float(np.mean(np.concatenate(d_old) == np.concatenate(d_new)))
    return spearmanr(p_old, p_new).statistic, equal, len(p_old), rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--methods", default="minilm", help="comma-separated methods of the config")
    ap.add_argument("--k", type=int, default=100, help="salad sets of the old scheme")
    ap.add_argument("--pool", type=int, default=200, help="salad texts of the new pool")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)

    cfg = yaml.safe_load(Path(args.config).read_text(encoding="utf-8"))
    study = prepare(cfg)
    tables = {
        s: read_theme_file(p, set_name=s, text_template=study.template)
        for s, p in study.sets.items()
    }
    nm = study.metrics["null_model"]
    seed, alpha = nm["seed"], nm["alpha"]
    n_b = {b: len(tables[b]) for b in study.b_sets}
    print(f"config {args.config}: {len(study.pairs)} comparisons, B sets {n_b}")
    print(
        f"null texts embedded per method: K = {args.k} salad sets -> "
        f"{args.k * sum(n_b.values())}; pool P = {args.pool} -> {args.pool * len(n_b)}"
    )
    with tempfile.TemporaryDirectory() as cache:
        for m in args.methods.split(","):
            scorer = Scorer(m, study.methods[m], Path(cache), args.threads)
            for pool_seed, label in ((seed, "same seed"), (seed + 1, "pool seed + 1")):
                t0 = time.perf_counter()
                rho, equal, n, rows = agreement(
                    study, tables, scorer, k=args.k, pool=args.pool, seed=seed,
                    pool_seed=pool_seed, alpha=alpha,
                )  # fmt: skip
                print(
                    f"\n{m} ({label}): Spearman rho of p-values {rho:.3f} over {n} A themes; "
                    f"equal BH decisions at q <= {alpha}: {equal:.3f} "
                    f"({time.perf_counter() - t0:.0f} s)"
                )
                print("| comparison | significant_match_rate K | pool | equal decisions |")
                print("|---|---|---|---|")
                for name, old, new, eq in rows:
                    print(f"| {name} | {old:.3f} | {new:.3f} | {eq:.3f} |")


if __name__ == "__main__":
    main()
