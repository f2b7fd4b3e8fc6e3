"""Validation of the word-salad null (metrics/sets/nulls.py): type-I error at alpha, BH's false
discovery rate and power (docs/nulls.md, docs/validity.md).

Designs:
- `iid_{dist}`: the exact null of the issue. Each of n_a themes has its own pool of P scores
  (200 rounded up to whole sets of n_b, as the pipeline makes it) drawn from `dist`, and its
  observed best is the maximum of n_b fresh draws. Planted matches: a share of the themes
  gets the best whose true p is 0.001 (power, with the oracle's power from the true
  distribution beside it), and the issue's case, a match at the pool's 99.5th percentile
  + 0.05 (power of p <= 0.05, n_b = 10).
- `salad_{method}_{scale}_{B}`: a real word-salad set of a demo theme set B plays B, made
  exactly as the pipeline makes salad sets (embed.texts.word_salad_sets), scored against
  data/demo/themes/human.csv with the method (TF-IDF always, MiniLM in the full grid) on the
  raw and the z scale. One collection of M salad sets per B: replicate r takes set r as the
  real B and the next K sets (cyclically) as its pool, so every replicate is the pipeline's
  case with a different pool and B.
- `planted_{method}_{scale}`: the same with B = llm_paraphrase, its salad set carrying the
  real paraphrases of some human themes (data/demo/README.md's mapping) in place of salad
  texts: power and FDR of BH at alpha.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from themesim.embed.encode import encode_with
from themesim.embed.models import MINILM
from themesim.embed.texts import word_salad_sets
from themesim.errors import InputError
from themesim.io.themes import read_theme_file
from themesim.metrics.sets.nulls import (
    FLOOR,
    GPD,
    bh_qvalues,
    defined_sets,
    null_pvalues,
    null_pvalues_with_tail,
    theme_pvalues,
)
from themesim.metrics.sets.scales import z_scale
from themesim.similarity import tfidf
from themesim.validate.core import Scope, rng_for, row, summary_frame
from themesim.validate.parallel import starmap

AREA = "nulls"
ALPHA = 0.05
POOL = 200  # the pipeline's default metrics.null_model.pool
PROCEDURE = "salad-set ranks + GPD tail"
DEMO = Path(__file__).resolve().parents[3] / "data" / "demo" / "themes"
SETS = {
    "human": "human.csv",
    "llm_partial": "llm_partial.md",
    "qwen_run1": "qwen_run1.csv",
    "qwen_run2": "qwen_run2.csv",
    "qwen_run3": "qwen_run3.csv",
    "llm_paraphrase": "llm_paraphrase.yaml",
    "llm_granular": "llm_granular.json",
}
# data/demo/README.md: human theme (row) -> its paraphrase in llm_paraphrase (row).
PARAPHRASE_OF = {0: 1, 1: 3, 2: 0, 3: 5, 4: 2, 5: 7, 6: 4, 7: 9, 8: 8, 9: 6}

GRID = {
    "small": {
        "dists": ("normal", "beta"),
        "sizes": ((6, 6), (10, 10)),
        "draws": 200,
        "methods": ("tfidf",),
        "b_sets": ("qwen_run1", "llm_paraphrase"),
        "salad_sets": 120,
        "replicates": 120,
    },
    "full": {
        "dists": ("uniform", "beta", "normal", "gumbel", "t5"),
        "sizes": ((4, 4), (6, 6), (10, 10), (20, 20), (30, 30), (10, 20)),
        "draws": 400,
        "methods": ("tfidf", "minilm"),
        "b_sets": ("llm_partial", "qwen_run1", "qwen_run3", "llm_paraphrase", "llm_granular"),
        "salad_sets": 200,
        "replicates": 200,
    },
}


def _dist(name: str):
    return {
        "uniform": stats.uniform(0.0, 1.0),
        "beta": stats.beta(2.0, 5.0),
        "normal": stats.norm(0.3, 0.1),
        "gumbel": stats.gumbel_r(0.3, 0.05),  # exponential tail (shape 0)
        "t5": stats.t(5.0, 0.3, 0.05),  # heavy tail (shape 0.2): a stress design
    }[name]


def pool_size(n_b: int, pool: int = POOL) -> int:
    """The pipeline's pool: `pool` texts rounded up to whole salad sets of n_b."""
    return math.ceil(pool / n_b) * n_b


def _design_columns(design: str, kind: str, method: str, scale: str, n_a: int, n_b: int) -> dict:
    """The first columns of every design's row: what was scored, and its null pool."""
    pool = pool_size(n_b)
    scored = {"design": design, "kind": kind, "method": method, "scale": scale, "n_a": n_a}
    return scored | {"n_b": n_b, "pool": pool, "salad_sets_in_pool": pool // n_b}


def _rates(p: np.ndarray) -> dict:
    return {
        f"p_le_{a}": float(np.mean(p <= a)) if p.size else np.nan
        for a in (0.5, 0.05, 0.01, 0.005, 0.001)
    }


def _bh(p: np.ndarray) -> np.ndarray:
    """BH decisions at ALPHA per row of p (draws x themes)."""
    return np.vstack([bh_qvalues(r) <= ALPHA for r in p])


# Heavy-tailed scores (GPD shape > 0): no pool of finite size bounds such a tail beyond its
# largest value, and scores against salad texts are bounded, their fitted tails light
# (docs/nulls.md). Measured and shown, outside the contract.
STRESS = {"iid_t5"}


def _summary_rows(rec: dict, n_a: int, n_b: int) -> list[dict]:
    d, draws = rec["design"], rec["draws"]
    at = Scope(AREA, d, n_a=n_a, n_b=n_b, required=False if d in STRESS else None)
    out = [
        row(at, "null_p", PROCEDURE, "type1_error", rec["p_le_0.05"], rec["n_p"],
            nominal=ALPHA),
        row(at, "null_p", PROCEDURE, "p_le_0.5", rec["p_le_0.5"], rec["n_p"], nominal=0.5),
        row(at, "null_q", "BH", "fdr", rec["fdr"], draws, nominal=ALPHA),
    ]  # fmt: skip
    for key, proc in (("power", "BH"), ("oracle_power", "BH, true null distribution")):
        if key in rec and np.isfinite(rec[key]):
            out.append(row(at, "null_q", proc, "power", rec[key], rec["n_planted"]))
    if "planted_fdr" in rec:
        out.append(
            row(at, "null_q", "BH, planted matches", "fdr", rec["planted_fdr"], draws,
                nominal=ALPHA)
        )  # fmt: skip
    if "issue_power" in rec:
        out.append(
            row(at, "null_p", "p <= 0.05, match at pool q99.5 + 0.05", "power",
                rec["issue_power"], draws)
        )  # fmt: skip
    return out


# --- synthetic scores ---------------------------------------------------------------------


def iid_design(dist: str, n_a: int, n_b: int, draws: int, seed: int, share: float = 0.3):
    """The exact null and planted matches on scores drawn from `dist` (module docstring)."""
    F = _dist(dist)
    rng = rng_for(seed, AREA, "iid", dist, n_a, n_b)
    size = pool_size(n_b)
    m = max(1, round(share * n_a))
    # The best whose true p is 0.001: G(x) = F(x)^n_b.
    planted = float(F.ppf((1 - 0.001) ** (1 / n_b)))
    p_null, how, dec_null, dec_pl, orc_pl, fdp, issue = [], [], [], [], [], [], []
    for _ in range(draws):
        pools = F.rvs(size=(n_a, size), random_state=rng)
        obs = F.rvs(size=(n_a, n_b), random_state=rng).max(axis=1)
        p, h = null_pvalues_with_tail(obs, pools, n_b)
        p_null.append(p)
        how.append(h)
        alt = obs.copy()
        alt[:m] = planted
        pa, _ = null_pvalues_with_tail(alt, pools, n_b)
        dec_pl.append(pa)
        orc_pl.append(1 - F.cdf(alt) ** n_b)
        if n_b == 10:  # the issue's case: one theme, a match at its pool's q99.5 + 0.05
            x = np.quantile(pools[0], 0.995) + 0.05
            issue.append(null_pvalues_with_tail(np.array([x]), pools[:1], n_b)[0][0])
    p_null, how = np.vstack(p_null), np.vstack(how)
    dec_null = _bh(p_null)
    q_pl, q_orc = _bh(np.vstack(dec_pl)), _bh(np.vstack(orc_pl))
    fdp = q_pl[:, m:].sum(axis=1) / np.maximum(q_pl.sum(axis=1), 1)
    rec = {
        **_design_columns(f"iid_{dist}", "synthetic", dist, "raw", n_a, n_b),
        "draws": draws,
        "n_p": p_null.size,
        **_rates(p_null.ravel()),
        "fdr": float(dec_null.any(axis=1).mean()),
        "share_gpd": float(np.mean(how == GPD)),
        "share_floor": float(np.mean(how == FLOOR)),
        "n_planted": m * draws,
        "planted_true_p": 0.001,
        "power": float(q_pl[:, :m].mean()),
        "oracle_power": float(q_orc[:, :m].mean()),
        "planted_fdr": float(fdp.mean()),
    }
    if issue:
        rec["issue_power"] = float(np.mean(np.array(issue) <= ALPHA))
    return rec


# --- real word-salad sets -----------------------------------------------------------------


def demo_texts(name: str) -> list[str]:
    path = DEMO / SETS[name]
    if not path.exists():
        raise InputError(str(path), "the demo theme set is missing", "Run from a checkout")
    return read_theme_file(path)["text"].tolist()


class Scorer:
    """Scores of A's themes against sets of texts, as a method's pipeline makes them: the
    cross matrix and each set's within-set matrix (TF-IDF fitted on A plus the set, and on
    the set alone; MiniLM through the embedding cache)."""

    def __init__(self, method: str, a_texts: list[str]):
        self.method = method
        self.a = a_texts
        self._scored: dict = {}
        if method == "minilm":
            self.emb_a = self._embed(a_texts)
            self.W_a = self.emb_a @ self.emb_a.T
        else:
            self.W_a = tfidf(a_texts, None)

    @staticmethod
    def _embed(texts: list[str]) -> np.ndarray:
        emb, _ = encode_with({"model": MINILM}, texts, 1, cache=None, what="validate nulls")
        emb = emb.astype(np.float64)
        return emb / np.linalg.norm(emb, axis=1, keepdims=True)

    def score(self, sets: list[list[str]]) -> np.ndarray:
        """(M, n_a, n_b) cross matrices of M sets of n_b texts (kept: the raw and z designs
        score the same sets)."""
        key = ("cross", tuple(map(tuple, sets)))
        if key not in self._scored:
            if self.method == "minilm":
                emb = self._set_vectors(sets)
                self._scored[key] = np.einsum("ad,mbd->mab", self.emb_a, emb)
            else:
                self._scored[key] = np.stack([tfidf(self.a, s) for s in sets])
        return self._scored[key]

    def within(self, sets: list[list[str]]) -> np.ndarray:
        """(M, n_b, n_b) within-set matrices (TF-IDF fitted on the set alone)."""
        key = ("within", tuple(map(tuple, sets)))
        if key not in self._scored:
            if self.method == "minilm":
                emb = self._set_vectors(sets)
                self._scored[key] = np.einsum("mid,mjd->mij", emb, emb)
            else:
                self._scored[key] = np.stack([tfidf(s, None) for s in sets])
        return self._scored[key]

    def _set_vectors(self, sets: list[list[str]]) -> np.ndarray:
        return self._embed([t for s in sets for t in s]).reshape(len(sets), len(sets[0]), -1)

    def on_scale(self, sets: list[list[str]], scale: str) -> np.ndarray:
        """The cross matrices on the scale: raw, or z against A's and each set's spread."""
        S = self.score(sets)
        if scale == "raw":
            return S

        W = self.within(sets)
        return np.stack([z_scale(m, self.W_a, w)[0] for m, w in zip(S, W, strict=True)])


def salad_design(scorer: Scorer, b_name: str, scale: str, salad_sets: int, reps: int, seed):
    """A real salad set of B plays B (module docstring); None when no set is scorable."""
    b = demo_texts(b_name)
    n_b, n_a = len(b), len(scorer.a)
    k = pool_size(n_b) // n_b
    sets = word_salad_sets(b, salad_sets, seed=int(rng_for(seed, AREA, b_name).integers(2**31)))
    Z = scorer.on_scale(sets, scale)
    ok = np.isfinite(Z).all(axis=(1, 2))  # a set with an undefined z: not scorable
    Z = Z[ok]
    if len(Z) <= k:
        return None
    reps = min(reps, len(Z))
    p = np.empty((reps, n_a))
    how = np.empty((reps, n_a), dtype=object)
    for r in range(reps):
        pool_sets = [Z[(r + 1 + j) % len(Z)] for j in range(k)]
        pool, _ = defined_sets(np.concatenate(pool_sets, axis=1), n_b)
        obs = Z[r].max(axis=1)
        for i in range(n_a):
            pi, hi = theme_pvalues(obs[i : i + 1], pool[i], n_b)
            p[r, i], how[r, i] = pi[0], hi[0]
    return {
        **_design_columns(
            f"salad_{scorer.method}_{scale}_{b_name}", "real salad", scorer.method, scale, n_a, n_b
        ),
        "draws": reps,
        "n_p": p.size,
        **_rates(p.ravel()),
        "fdr": float(_bh(p).any(axis=1).mean()),
        "share_gpd": float(np.mean(how == GPD)),
        "share_floor": float(np.mean(how == FLOOR)),
        "unscorable_salad_sets": int((~ok).sum()),
    }


def planted_design(scorer: Scorer, scale: str, salad_sets: int, reps: int, seed, m: int = 3):
    """B = a salad set of llm_paraphrase carrying the real paraphrases of m human themes."""
    b = demo_texts("llm_paraphrase")
    n_b, n_a = len(b), len(scorer.a)
    k = pool_size(n_b) // n_b
    rng = rng_for(seed, AREA, "planted")  # the same sets on both scales
    pool_sets = word_salad_sets(b, salad_sets, seed=int(rng.integers(2**31)))
    Z = scorer.on_scale(pool_sets, scale)
    ok = np.flatnonzero(np.isfinite(Z).all(axis=(1, 2)))  # sets whose z is defined
    reps = min(reps, salad_sets)
    real = []
    for r in range(reps):
        chosen = rng.choice(n_a, size=m, replace=False)
        salad = list(pool_sets[r])
        for i in chosen:  # the paraphrase takes the place of the salad text of its length
            salad[PARAPHRASE_OF[i]] = b[PARAPHRASE_OF[i]]
        real.append((chosen, salad))
    Z_b = scorer.on_scale([s for _, s in real], scale)
    power, fdp, n_planted = [], [], 0
    for r, (chosen, _) in enumerate(real):
        if not np.isfinite(Z_b[r]).all() or len(ok) <= k:
            continue
        after = ok[ok > r].tolist() + ok[ok < r].tolist()  # the next k sets, not set r
        pool = np.concatenate([Z[j] for j in after[:k]], axis=1)
        p = null_pvalues(Z_b[r].max(axis=1), pool, n_b)
        q = _bh(p[None, :])[0]
        planted = np.isin(np.arange(n_a), chosen)
        power.append(q[planted].sum())
        n_planted += m
        fdp.append(q[~planted].sum() / max(q.sum(), 1))
    return {
        **_design_columns(
            f"planted_{scorer.method}_{scale}",
            "real paraphrases among salad",
            scorer.method,
            scale,
            n_a,
            n_b,
        ),
        "draws": len(fdp),
        "n_planted": n_planted,
        "power": float(np.sum(power) / max(n_planted, 1)),
        "planted_fdr": float(np.mean(fdp)) if fdp else np.nan,
    }


def run(grid: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    g = GRID[grid]
    records, summary = [], []
    tasks = [(d, n_a, n_b, g["draws"], seed) for d in g["dists"] for n_a, n_b in g["sizes"]]
    for rec in starmap(iid_design, tasks):
        records.append(rec)
        summary += _summary_rows(rec, rec["n_a"], rec["n_b"])
    real = [(m, sc, b) for m in g["methods"] for sc in ("raw", "z") for b in g["b_sets"]]
    real += [(m, sc, None) for m in g["methods"] for sc in ("raw", "z")]
    tasks = [(m, sc, b, g["salad_sets"], g["replicates"], seed) for m, sc, b in real]
    for rec in starmap(real_design, tasks):
        if rec is None:
            continue
        records.append(rec)
        if rec["design"].startswith("salad_"):
            summary += _summary_rows(rec, rec["n_a"], rec["n_b"])
            continue
        at = Scope(AREA, rec["design"], n_a=rec["n_a"], n_b=rec["n_b"])
        summary.append(row(at, "null_q", "BH", "power", rec["power"], rec["n_planted"]))
        summary.append(
            row(at, "null_q", "BH, planted matches", "fdr", rec["planted_fdr"], rec["draws"],
                nominal=ALPHA)
        )  # fmt: skip
    return pd.DataFrame.from_records(records), summary_frame(summary)


def real_design(method: str, scale: str, b_name, salad_sets: int, reps: int, seed: int):
    """salad_design against B = b_name, or planted_design when b_name is None (a process of
    its own: one scorer each)."""
    scorer = _scorer(method)
    if b_name is None:
        return planted_design(scorer, scale, salad_sets, reps, seed)
    return salad_design(scorer, b_name, scale, salad_sets, reps, seed)


_SCORERS: dict = {}


def _scorer(method: str) -> Scorer:
    if method not in _SCORERS:
        _SCORERS[method] = Scorer(method, demo_texts("human"))
    return _SCORERS[method]
