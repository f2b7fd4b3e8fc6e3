"""The default coder on real, independently coded data: IBM ArgKP 2021, train split
(docs/grounding.md, "The coder on outside data: ArgKP").

Per topic and stance the experts' key points are the codes (one theme set) and each argument is
a segment. The coder assigns each argument to one of its topic-stance's key points or to none,
through the pipeline's own assignment (themesim.coder.assign.vector_labels, the function
coder_rows calls) with the default settings frozen in docs/grounding.md (sha256 below). Truth:
an argument's label-1 key points; an argument without a label-1 pair is "none" (SOURCE.md of
the data); unlabelled pairs are unknown, counted as "not this key point" in the headline κ
(the argument's answer is its label-1 set) and left out in the "known pairs" variant.

Figures per method (MiniLM, mpnet, TF-IDF):

- median per-key-point Cohen's κ (scikit-learn's cohen_kappa_score; one binary κ per key point
  over its topic-stance's arguments; undefined κ — coder and truth both constant — is left
  out of the median and counted), 95 % percentile interval from a bootstrap over the 24 topics
  (both stances of a topic together);
- accuracy: the assigned key point (or none) is one of the argument's true answers; beside it
  the majority baseline (always answering the topic-stance's most common true answer: an
  oracle, it reads the truth of the arguments it is scored on);
- how often the coder says none against how often the truth is none; the spread over topics.

Beside them, the field's figures (themesim.coder.kpa): KPA 2021 mAP strict and relaxed (each
argument's chosen key point, the top 50 % by the coder's confidence — the raw cosine of its
choice), "none" precision and recall, and per topic κ, accuracy, majority and mAP
(--per-topic). `--trained` adds the trained coder's nested validation (grounding.coder.kind
`trained`), read from the shipped weights' head.json (made by `themesim train-coder`, which
trains one adapter per fold of topics), on the same figures.

Beside them: how well the scores rank whatever the abstention (the share of arguments with a
true key point whose choice is one; the ROC AUC of the choice's cosine, key point against
none) and the ceiling of any abstention (an oracle that says none exactly when the truth is).

`--nested` then fits abstention by nested validation over topics: for each held-out topic
(leave one topic out) a rule is chosen on the other 23 topics only (highest median
per-key-point κ there, or accuracy with --select accuracy) and codes the held-out topic; the
figures above are computed on the pooled held-out answers, and set against the frozen coder's
on the same topic resamples. Two families: (a) a threshold and a minimum gap to the second key
point on one scale (raw cosine, centred, z, or the frozen rule's own); (b) a logistic
regression of "the frozen rule's choice is right" on features of that choice, with its cut-off.

The data is read in place (CDLA-Sharing-1.0: never copied into the repository).

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python bench/coder_argkp.py \
        [--data ../shared/data/argkp_train] [--methods minilm mpnet tfidf] [--nested]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

ROOT = Path(__file__).resolve().parents[1]

# The default coder, frozen before any ArgKP figure was seen (docs/grounding.md).
FROZEN = {
    "coder": {
        "kind": "similarity",
        "rule": "top1",
        "center": True,
        "context": 0.0,
        "fit_thresholds": False,
        "min_coded": 3,
    },
    "abstain": "none when the best theme (highest score minus its mean over the segments) has "
    "a raw cosine below the method's assign_threshold",
    "text_template": "{name}: {description}",
    "methods": {
        "minilm": {
            "kind": "sentence_transformer",
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "assign_threshold": 0.2,
        },
        "mpnet": {
            "kind": "sentence_transformer",
            "model": "sentence-transformers/all-mpnet-base-v2",
            "assign_threshold": 0.2,
        },
        "tfidf": {
            "kind": "tfidf",
            "analyzer": "word",
            "ngram_range": [1, 1],
            "assign_threshold": 0.08,
        },
    },
}
FROZEN_SHA256 = "0f0735d9413291cb3fa4f5d0dd0c447e90f176d66174cd482bbcab847b0d92ef"
METHODS = ("minilm", "mpnet", "tfidf")
NONE = -1


def canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256(obj) -> str:
    return hashlib.sha256(canonical(obj).encode("utf-8")).hexdigest()


def live_settings() -> dict:
    """The frozen settings' fields as the code's defaults give them today."""
    from themesim.coder.settings import coder_settings, rule_of
    from themesim.io.themes import TEXT_TEMPLATE_DEFAULT
    from themesim.kinds import DEFAULT_METHODS
    from themesim.similarity import tfidf_options

    c = coder_settings(None)
    methods = {}
    for m in METHODS:
        spec = DEFAULT_METHODS[m]
        row = {"kind": spec["kind"], "assign_threshold": spec["assign_threshold"]}
        if spec["kind"] == "tfidf":
            opt = tfidf_options(spec)
            row |= {"analyzer": opt["analyzer"], "ngram_range": list(opt["ngram_range"])}
        else:
            row["model"] = spec["model"]
        methods[m] = row
    return {
        "coder": {k: c[k] for k in FROZEN["coder"] if k != "rule"}
        | {"rule": rule_of(c, c["kind"])},
        "abstain": FROZEN["abstain"],  # the rule of themesim.coder.assign.decide, in words
        "text_template": TEXT_TEMPLATE_DEFAULT,
        "methods": methods,
    }


def kinds_defaults() -> dict:
    from themesim.kinds import DEFAULT_METHODS

    return DEFAULT_METHODS


# ---------------------------------------------------------------- data


def load(data: Path) -> list[dict]:
    """One dict per topic and stance: its themes table (the project's theme reader), its
    arguments as segments, truth (arguments × key points: label 1) and known (labelled)."""
    from themesim.io.themes import read_theme_file

    args = pd.read_csv(data / "arguments_train.csv")
    kps = pd.read_csv(data / "key_points_train.csv")
    lab = pd.read_csv(data / "labels_train.csv")
    label = {
        (a, k): int(v)
        for a, k, v in lab[["arg_id", "key_point_id", "label"]].itertuples(index=False)
    }
    groups = []
    with tempfile.TemporaryDirectory() as tmp:  # outside the repository; removed at once
        for (topic, stance), kp in kps.groupby(["topic", "stance"], sort=True):
            ar = args[(args["topic"] == topic) & (args["stance"] == stance)].reset_index(drop=True)
            path = Path(tmp) / "key_points.csv"
            pd.DataFrame({"id": kp["key_point_id"], "name": kp["key_point"]}).to_csv(
                path, index=False
            )
            themes = read_theme_file(path, set_name="key_points")
            ids = themes["theme_id"].tolist()
            truth = np.zeros((len(ar), len(ids)), dtype=bool)
            known = np.zeros_like(truth)
            for i, a in enumerate(ar["arg_id"]):
                for j, k in enumerate(ids):
                    v = label.get((a, k))
                    known[i, j] = v is not None
                    truth[i, j] = v == 1
            segments = pd.DataFrame(
                {
                    "transcript": f"{topic} [{stance:+d}]",
                    "segment": np.arange(len(ar)),
                    "speaker": "argument",
                    "text": ar["argument"].astype(str),
                }
            )
            groups.append(
                {
                    "topic": topic,
                    "stance": int(stance),
                    "themes": themes,
                    "segments": segments,
                    "truth": truth,
                    "known": known,
                }
            )
    return groups


def vectors(method: str, groups: list[dict], cache, threads) -> list[tuple]:
    """Per group (theme vectors, argument vectors) of the method, as its kind makes them for the
    coder: the model's vectors (sentence_transformer; through the project's embedding cache)
    or TF-IDF fitted on the group's key points and arguments."""
    from themesim import kinds
    from themesim.embed.encode import encode_with

    spec = kinds.DEFAULT_METHODS[method]
    if spec["kind"] == "tfidf":
        kind = kinds.get("tfidf")
        return [kind.segment_vectors(spec, g["themes"], g["segments"]) for g in groups]
    texts = [
        t for g in groups for t in g["themes"]["text"].tolist() + g["segments"]["text"].tolist()
    ]
    emb, _ = encode_with(spec, texts, threads, cache=cache, what=f"argkp {method}")
    out, i = [], 0
    for g in groups:
        nt, ns = len(g["themes"]), len(g["segments"])
        out.append((emb[i : i + nt], emb[i + nt : i + nt + ns]))
        i += nt + ns
    return out


def frozen_answers(method: str, groups, vecs) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(per group each argument's key point index or NONE, per group the scores S) of the
    default coder, through themesim.coder.assign.vector_labels."""
    from themesim.coder.assign import CoderOptions, vector_labels
    from themesim.coder.settings import coder_settings
    from themesim.kinds import DEFAULT_METHODS

    c = coder_settings(None)
    thr = float(DEFAULT_METHODS[method]["assign_threshold"])
    answers, scores = [], []
    for g, (T, V) in zip(groups, vecs, strict=True):
        seg = g["segments"]
        eligible = np.ones(len(seg), dtype=bool)
        L, S = vector_labels(T, V, seg, eligible, CoderOptions.of(c, c["kind"]), threshold=thr)
        assert (L.sum(axis=1) <= 1).all()  # top1: at most one key point per argument
        answers.append(np.where(L.any(axis=1), L.argmax(axis=1), NONE))
        scores.append(S)
    return answers, scores


# ---------------------------------------------------------------- figures


def kp_kappas(groups, answers, known_only: bool = False) -> list[np.ndarray]:
    """Per group, one Cohen's κ per key point (NaN: undefined)."""
    out = []
    for g, ans in zip(groups, answers, strict=True):
        ks = np.full(g["truth"].shape[1], np.nan)
        for k in range(len(ks)):
            rows = g["known"][:, k] if known_only else np.ones(len(ans), dtype=bool)
            y, p = g["truth"][rows, k].astype(int), (ans[rows] == k).astype(int)
            if len(y) == 0:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ks[k] = cohen_kappa_score(y, p, labels=[0, 1])
        out.append(ks)
    return out


def correct(groups, answers) -> list[np.ndarray]:
    """Per group, whether each argument's answer is one of its true answers."""
    out = []
    for g, ans in zip(groups, answers, strict=True):
        none = ~g["truth"].any(axis=1)
        hit = np.where(ans == NONE, none, g["truth"][np.arange(len(ans)), np.maximum(ans, 0)])
        out.append(hit)
    return out


def majority(groups) -> list[np.ndarray]:
    """Per group, always the most common true answer (none first, then key points in order)."""
    out = []
    for g in groups:
        counts = [(~g["truth"].any(axis=1)).sum(), *g["truth"].sum(axis=0)]
        pick = int(np.argmax(counts)) - 1
        out.append(np.full(len(g["truth"]), pick))
    return out


def ci(draws) -> tuple[float, float]:
    """The 95 % percentile interval of bootstrap draws (NaN without draws)."""
    return tuple(np.percentile(draws, [2.5, 97.5])) if len(draws) else (np.nan, np.nan)


def summary(groups, answers, *, boot: int, seed: int) -> dict:
    topics = sorted({g["topic"] for g in groups})
    by_topic = {t: [i for i, g in enumerate(groups) if g["topic"] == t] for t in topics}
    ks = kp_kappas(groups, answers)
    fast = np.concatenate(count_kappas(groups, answers))
    assert np.allclose(np.concatenate(ks), fast, equal_nan=True), "κ from counts differs"
    ks_known = kp_kappas(groups, answers, known_only=True)
    hit = correct(groups, answers)
    base = correct(groups, majority(groups))
    allk = np.concatenate(ks)
    n = sum(len(h) for h in hit)
    rng = np.random.default_rng(seed)
    bk, ba, bd = [], [], []
    for _ in range(boot):
        pick = [i for t in rng.choice(topics, len(topics)) for i in by_topic[t]]
        k = np.concatenate([ks[i] for i in pick])
        bk.append(np.nanmedian(k))
        c = sum(hit[i].sum() for i in pick)
        b = sum(base[i].sum() for i in pick)
        m = sum(len(hit[i]) for i in pick)
        ba.append(c / m)
        bd.append((c - b) / m)
    per_topic_k = [np.nanmedian(np.concatenate([ks[i] for i in by_topic[t]])) for t in topics]
    per_topic_a = [
        sum(hit[i].sum() for i in by_topic[t]) / sum(len(hit[i]) for i in by_topic[t])
        for t in topics
    ]
    said_none = sum(int((a == NONE).sum()) for a in answers)
    true_none = sum(int((~g["truth"].any(axis=1)).sum()) for g in groups)
    both_none = sum(
        int(((a == NONE) & ~g["truth"].any(axis=1)).sum())
        for g, a in zip(groups, answers, strict=True)
    )
    return {
        "arguments": n,
        "key_points": len(allk),
        "kappa_median": float(np.nanmedian(allk)),
        "kappa_ci": ci(bk),
        "kappa_undefined": int(np.isnan(allk).sum()),
        "kappa_undefined_as_0": float(np.median(np.nan_to_num(allk, nan=0.0))),
        "kappa_known_median": float(np.nanmedian(np.concatenate(ks_known))),
        "kappa_mean": float(np.nanmean(allk)),
        "accuracy": sum(h.sum() for h in hit) / n,
        "accuracy_ci": ci(ba),
        "majority": sum(b.sum() for b in base) / n,
        "gain_ci": ci(bd),
        "said_none": said_none,
        "true_none": true_none,
        "both_none": both_none,
        "topic_kappa": np.percentile(per_topic_k, [0, 25, 50, 75, 100]),
        "topic_accuracy": np.percentile(per_topic_a, [0, 25, 50, 75, 100]),
        # the same topic resamples for every call with the same seed: paired differences
        "boot_kappa": np.array(bk),
        "boot_accuracy": np.array(ba),
    }


def show(method: str, what: str, s: dict) -> None:
    q = lambda v: " / ".join(f"{x:.2f}" for x in v)  # noqa: E731
    print(f"\n{method}: {what}")
    print(
        f"  median per-key-point κ {s['kappa_median']:.3f}  95 % CI [{s['kappa_ci'][0]:.3f}, "
        f"{s['kappa_ci'][1]:.3f}] (bootstrap over topics)  over {s['key_points']} key points, "
        f"{s['kappa_undefined']} undefined (left out; as 0: {s['kappa_undefined_as_0']:.3f}); "
        f"mean {s['kappa_mean']:.3f}; unlabelled pairs left out: {s['kappa_known_median']:.3f}"
    )
    print(
        f"  accuracy {s['accuracy']:.3f} [{s['accuracy_ci'][0]:.3f}, {s['accuracy_ci'][1]:.3f}]"
        f"  majority baseline {s['majority']:.3f}  gain {s['accuracy'] - s['majority']:+.3f} "
        f"[{s['gain_ci'][0]:+.3f}, {s['gain_ci'][1]:+.3f}]  ({s['arguments']} arguments)"
    )
    print(f"  says none {s['said_none']} times; truth none {s['true_none']}; both {s['both_none']}")
    print(
        f"  per topic (min / q1 / median / q3 / max): κ {q(s['topic_kappa'])}; "
        f"accuracy {q(s['topic_accuracy'])}"
    )


def ranking(groups, scores) -> str:
    """How well the scores rank, whatever the abstention: the share of the arguments with a
    true key point whose choice (the default rule's) is one, and the ROC AUC of the chosen key
    point's raw cosine for "the argument has a true key point" against "none"."""
    from sklearn.metrics import roc_auc_score

    hit = has = 0
    top, some = [], []
    for g, S in zip(groups, scores, strict=True):
        best, t, _ = rule_features(S, "default")
        y = g["truth"].any(axis=1)
        hit += int(g["truth"][np.arange(len(best)), best][y].sum())
        has += int(y.sum())
        top.append(t)
        some.append(y)
    auc = roc_auc_score(np.concatenate(some), np.concatenate(top))
    return (
        f"choice right for {hit / has:.3f} of the {has} arguments with a true key point; "
        f"AUC of its cosine, key point vs none: {auc:.3f}"
    )


# ---------------------------------------------------------------- nested validation


def rule_features(S: np.ndarray, scale: str):
    """Per argument (best key point, its score, its gap to the second) on a scale.

    raw: the cosine; centred: minus the key point's mean over the arguments; z: centred and
    divided by the key point's standard deviation over them; default: best by centred, the
    score the raw cosine (the frozen rule), the gap on the centred scale."""
    mean = S.mean(axis=1, keepdims=True)
    sd = S.std(axis=1, keepdims=True)
    R = {"raw": S, "centred": S - mean, "default": S - mean}.get(scale)
    if R is None:
        R = (S - mean) / np.where(sd > 0, sd, 1.0)
    best = np.argmax(R, axis=0)
    cols = np.arange(S.shape[1])
    top = R[best, cols]
    second = np.sort(R, axis=0)[-2] if len(R) > 1 else np.full(S.shape[1], -np.inf)
    gap = top - second
    if scale == "default":
        top = S[best, cols]
    return best, top, gap


def grids(method: str) -> dict:
    raw = (
        np.round(np.arange(0.0, 0.41, 0.01), 3)
        if method == "tfidf"
        else np.round(np.arange(-0.1, 0.91, 0.01), 3)
    )
    cen = np.round(np.arange(-0.2, 0.61, 0.01), 3)
    z = np.round(np.arange(-1.0, 4.01, 0.05), 3)
    gap = [0.0, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15]
    gz = [0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5]
    return {
        "default": (raw, gap),
        "raw": (raw, gap),
        "centred": (cen, gap),
        "z": (z, gz),
    }


def count_kappas(groups, answers) -> list[np.ndarray]:
    """kp_kappas from the 2×2 counts (κ as cohen_kappa_score computes it; NaN where
    undefined), fast enough for a grid of rules; summary() checks the two agree."""
    out = []
    for g, ans in zip(groups, answers, strict=True):
        n, nk = g["truth"].shape
        yn = g["truth"].sum(axis=0)
        on = ans >= 0
        p = np.bincount(ans[on], minlength=nk)
        tp = np.bincount(ans[on], weights=g["truth"][np.nonzero(on)[0], ans[on]], minlength=nk)
        po = (n - p - yn + 2 * tp) / n
        pe = (p * yn + (n - p) * (n - yn)) / n**2
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where(pe < 1, (po - pe) / (1 - pe), np.nan))
    return out


def candidate_table(method: str, groups, scores):
    """Every candidate rule's per-key-point κ and per-group hits."""
    cands, K, H = [], [], []
    for scale, (tgrid, ggrid) in grids(method).items():
        feats = [rule_features(S, scale) for S in scores]
        for t in tgrid:
            for m in ggrid:
                ans = [np.where((top >= t) & (gap >= m), best, NONE) for best, top, gap in feats]
                cands.append((scale, float(t), float(m)))
                K.append(count_kappas(groups, ans))
                H.append([int(h.sum()) for h in correct(groups, ans)])
    return cands, K, np.array(H)


def nested(method: str, groups, scores, select: str = "kappa"):
    """Leave one topic out: the candidate with the highest median per-key-point κ (or
    accuracy) on the other topics codes the held-out topic. Returns the held-out answers and
    the candidate chosen per fold."""
    cands, K, H = candidate_table(method, groups, scores)
    topics = sorted({g["topic"] for g in groups})
    sizes = np.array([len(g["truth"]) for g in groups])
    answers = [None] * len(groups)
    chosen = {}
    for t in topics:
        train = np.array([g["topic"] != t for g in groups])
        if select == "kappa":
            crit = np.array(
                [
                    np.nanmedian(np.concatenate([k for k, tr in zip(kk, train, strict=True) if tr]))
                    for kk in K
                ]
            )
        else:
            crit = H[:, train].sum(axis=1) / sizes[train].sum()
        c = cands[int(np.nanargmax(crit))]  # ties: the first in grid order
        chosen[t] = c
        for i in np.nonzero(~train)[0]:
            best, top, gap = rule_features(scores[i], c[0])
            answers[i] = np.where((top >= c[1]) & (gap >= c[2]), best, NONE)
    return answers, chosen


def logistic_features(S: np.ndarray):
    """Per argument its best key point (the default rule's choice) and features of that
    choice: raw cosine, centred score, z score, gap to the second (centred; 1 with one key
    point), the argument's mean cosine over the key points, the number of key points."""
    best, top, gap = rule_features(S, "default")
    cols = np.arange(S.shape[1])
    cen = S - S.mean(axis=1, keepdims=True)
    sd = S.std(axis=1)
    z = cen[best, cols] / np.where(sd[best] > 0, sd[best], 1.0)
    gap = np.where(np.isfinite(gap), gap, 1.0)
    X = np.c_[top, cen[best, cols], z, gap, S.mean(axis=0), np.full(len(cols), len(S))]
    return best, X


def nested_logistic(groups, scores):
    """Leave one topic out: a logistic regression of "the default rule's choice is a true
    answer" on logistic_features, fitted on the other 23 topics, with the P(correct) below
    which the coder says none chosen there (highest median per-key-point κ)."""
    from sklearn.linear_model import LogisticRegression

    feats = [logistic_features(S) for S in scores]
    ok = [g["truth"][np.arange(len(b)), b] for g, (b, _) in zip(groups, feats, strict=True)]
    topics = sorted({g["topic"] for g in groups})
    answers = [None] * len(groups)
    chosen = {}
    for t in topics:
        tr = [i for i, g in enumerate(groups) if g["topic"] != t]
        X = np.vstack([feats[i][1] for i in tr])
        mu, sd = X.mean(axis=0), np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        fit = LogisticRegression(max_iter=1000).fit(
            (X - mu) / sd, np.concatenate([ok[i] for i in tr])
        )
        prob = {i: fit.predict_proba((feats[i][1] - mu) / sd)[:, 1] for i in range(len(groups))}
        best = (-np.inf, 0.0)
        for p in np.round(np.arange(0.0, 0.9, 0.02), 2):
            a = [np.where(prob[i] >= p, feats[i][0], NONE) for i in tr]
            k = np.nanmedian(np.concatenate(count_kappas([groups[i] for i in tr], a)))
            if k > best[0]:
                best = (k, float(p))
        chosen[t] = ("logistic", best[1], 0.0)
        for i, g in enumerate(groups):
            if g["topic"] == t:
                answers[i] = np.where(prob[i] >= best[1], feats[i][0], NONE)
    return answers, chosen


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "argkp_train"))
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    p.add_argument("--boot", type=int, default=2000, help="bootstrap resamples of the topics")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--nested", action="store_true", help="also the nested-validated rule")
    p.add_argument("--select", default="kappa", choices=("kappa", "accuracy"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cache", default=None, help="embedding cache folder (default: the project's)")
    p.add_argument("--per-topic", action="store_true", help="the figures of each topic")
    p.add_argument("--trained", action="store_true", help="the trained coder's nested figures")
    args = p.parse_args()

    live = live_settings()
    print(f"frozen default coder sha256 {FROZEN_SHA256}")
    print(
        f"the code's defaults today:  {sha256(live)}"
        f" ({'same' if sha256(live) == FROZEN_SHA256 else 'DIFFERENT: ' + canonical(live)})"
    )
    assert sha256(FROZEN) == FROZEN_SHA256

    t0 = time.time()
    groups = load(Path(args.data))
    print(
        f"ArgKP train: {len({g['topic'] for g in groups})} topics, {len(groups)} topic-stances, "
        f"{sum(len(g['truth']) for g in groups)} arguments, "
        f"{sum(g['truth'].shape[1] for g in groups)} key points "
        f"({time.time() - t0:.1f} s to read)"
    )
    if args.trained:
        trained_figures(args.per_topic)
    for m in args.methods:
        t0 = time.time()
        vecs = vectors(m, groups, args.cache, args.threads)
        answers, scores = frozen_answers(m, groups, vecs)
        thr = float(kinds_defaults()[m]["assign_threshold"])
        for a, S in zip(answers, scores, strict=True):  # the rules below restate the frozen one
            best, top, _ = rule_features(S, "default")
            assert (a == np.where(top >= thr, best, NONE)).all()
        s = summary(groups, answers, boot=args.boot, seed=args.seed)
        show(m, f"frozen default coder ({time.time() - t0:.0f} s)", s)
        field(groups, answers, scores, args.data, args.per_topic)
        oracle = [
            np.where(g["truth"].any(axis=1), rule_features(S, "default")[0], NONE)
            for g, S in zip(groups, scores, strict=True)
        ]
        o = summary(groups, oracle, boot=0, seed=args.seed)
        print("  " + ranking(groups, scores))
        print(
            f"  ceiling of any abstention on the coder's choice, an oracle that says none exactly "
            f"when the truth is none: median κ {o['kappa_median']:.3f}, accuracy "
            f"{o['accuracy']:.3f}"
        )
        if args.nested:
            for name, fit, fargs in (
                (
                    f"abstention rule (scale, threshold, gap) chosen by {args.select}",
                    nested,
                    (m, groups, scores, args.select),
                ),
                (
                    "logistic P(choice correct) with its cut-off chosen by κ",
                    nested_logistic,
                    (groups, scores),
                ),
            ):
                t0 = time.time()
                held, chosen = fit(*fargs)
                h = summary(groups, held, boot=args.boot, seed=args.seed)
                show(
                    m,
                    f"{name} on 23 topics, scored on the 24th (leave one topic out; "
                    f"{time.time() - t0:.0f} s)",
                    h,
                )
                dk = np.percentile(h["boot_kappa"] - s["boot_kappa"], [2.5, 97.5])
                da = np.percentile(h["boot_accuracy"] - s["boot_accuracy"], [2.5, 97.5])
                print(
                    f"  against the frozen coder (paired, same topic resamples): median κ "
                    f"{h['kappa_median'] - s['kappa_median']:+.3f} [{dk[0]:+.3f}, {dk[1]:+.3f}], "
                    f"accuracy {h['accuracy'] - s['accuracy']:+.3f} [{da[0]:+.3f}, {da[1]:+.3f}]"
                )
                met = h["kappa_median"] >= 0.5 and h["accuracy"] - h["majority"] >= 0.15
                print(
                    f"  targets (median κ ≥ 0.5, accuracy ≥ majority + 0.15): "
                    f"{'met' if met else 'not met'}"
                )
                picks = pd.Series([f"{c[0]} t={c[1]:g} gap={c[2]:g}" for c in chosen.values()])
                print(
                    "  chosen per fold: "
                    + "; ".join(f"{k} ×{v}" for k, v in picks.value_counts().items())
                )


def field(groups, answers, scores, data, per_topic: bool) -> None:
    """The KPA figures of the frozen coder: mAP strict / relaxed (confidence: the raw cosine
    of its choice), none precision / recall; per topic with --per-topic."""
    from themesim.coder import argkp, kpa

    gs = argkp.load(data)
    assert [(g.topic, g.stance) for g in gs] == [(g["topic"], g["stance"]) for g in groups]
    best = [rule_features(S, "default")[0] for S in scores]
    conf = [S[b, np.arange(S.shape[1])] for S, b in zip(scores, best, strict=True)]
    f = kpa.figures(gs, answers, best, conf)
    print(
        f"  KPA mAP strict {f['map_strict']:.3f}, relaxed {f['map_relaxed']:.3f}; none "
        f"precision {f['none_precision']:.3f}, recall {f['none_recall']:.3f}"
    )
    if per_topic:
        print_topics(kpa.by_topic(gs, answers, best, conf))


def print_topics(rows: dict) -> None:
    print("  | topic | κ median | accuracy | majority | none P | none R | mAP strict | relaxed |")
    for t, f in rows.items():
        cells = [f[k] for k in ("kappa_median", "accuracy", "majority", "none_precision",
                                "none_recall", "map_strict", "map_relaxed")]  # fmt: skip
        print(f"  | {t} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")


def trained_figures(per_topic: bool) -> None:
    """The shipped trained coder's nested validation, as `themesim train-coder` wrote it."""
    from themesim.coder.trained import card_of

    r = card_of()
    o = r["validation"]["overall"]
    print(f"\ntrained coder (head.json; {r['validation']['scheme']}):")
    print(
        f"  median per-key-point κ {o['kappa_median']:.3f} 95 % CI [{o['kappa_ci'][0]:.3f}, "
        f"{o['kappa_ci'][1]:.3f}]; accuracy {o['accuracy']:.3f} [{o['accuracy_ci'][0]:.3f}, "
        f"{o['accuracy_ci'][1]:.3f}] majority {o['majority']:.3f}; none precision "
        f"{o['none_precision']:.3f} recall {o['none_recall']:.3f}; mAP strict "
        f"{o['map_strict']:.3f} relaxed {o['map_relaxed']:.3f} (by P(right)), "
        f"{o['map_strict_score']:.3f} / {o['map_relaxed_score']:.3f} (by the cosine)"
    )
    if per_topic:
        print_topics(r["validation"]["per_topic"])


if __name__ == "__main__":
    main()
