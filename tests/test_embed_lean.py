"""The embedding job's lean paths (real MiniLM): a fully cached run never imports torch, the
rated pairs' texts reach the vector cache in the method's one embedding job, and the
calibration step then scores them without loading the model. Each run is a fresh process,
since torch, once imported by another test, stays in sys.modules."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import HUMAN, LLM

from themesim.embed.cache import EmbeddingCache, model_key
from themesim.embed.device import batch_rows
from themesim.embed.models import MINILM, resolve_model
from themesim.embed.vectors import text_sha256
from themesim.io.rated_pairs import rated_pair_texts
from themesim.io.themes import read_theme_file, write_themes_parquet
from themesim.metrics.calibration import read_rated_pairs

SPEC = {"model": MINILM, "path": None, "batch_size": 64, "device": "cpu", "dtype": "float32"}
# Rated pairs: one text also a theme's, the rest new; a comma and quotes inside a cell.
RATED = [
    ("Caring while working: Fitting shifts and meetings around looking after a parent",
     "Work and care: jobs squeezed around caring", 1),
    ("Money worries, bills", 'Costs: "care is expensive"', 1),
    ("Guilt about respite", "Gardening as escape", 0),
    ("Sleep: nothing at night", "Costs: care is expensive", 0),
]  # fmt: skip

# Runs in a fresh interpreter: the step (embed_method, or the calibration step's scores) and
# then which heavy modules it imported and what it wrote.
CHILD = """
import hashlib, json, sys
from pathlib import Path
args = json.loads(sys.argv[1])
if args["step"] == "embed":
    from themesim.steps.embed import embed_method
    from themesim.steps.job import Job
    out = args["out"]
    embed_method(Job(
        input={"themes": args["themes"], "pairs": [args["pairs"]] if args.get("pairs") else []},
        params={"method": "minilm", "spec": args["spec"], "cache": args["cache"],
                "nulls": out["nulls"], "pool": 20, "seed": 0, "top_k": 5},
        output={"embeddings": list(out["embeddings"].values()),
                "keywords": list(out["keywords"].values())},
        threads=1))
    files = sorted(p for v in args["out"].values() for p in v.values())
    digests = {Path(p).name + str(i): hashlib.sha256(Path(p).read_bytes()).hexdigest()
               for i, p in enumerate(files)}
else:
    from themesim.steps.calibration import pair_scores
    from themesim.metrics.calibration import read_rated_pairs
    pairs = read_rated_pairs(args["pairs"])
    scores = pair_scores("sentence_transformer", args["spec"], (pairs["text_a"],
                         pairs["text_b"]), cache=args["cache"], threads=1)
    digests = {"scores": [float(s) for s in scores]}
heavy = ("torch", "sentence_transformers", "transformers", "sklearn")
loaded = [m for m in heavy if m in sys.modules]
print(json.dumps({"loaded": loaded, "out": digests}))
"""


def child(**args) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(args)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def themes(tmp_path_factory):
    root = tmp_path_factory.mktemp("lean")
    (root / "human.csv").write_text(HUMAN)
    (root / "llm.yaml").write_text(LLM)
    paths = {}
    for name in ("human", "llm"):
        src = next(root.glob(f"{name}.*"))
        paths[name] = str(root / f"{name}.parquet")
        write_themes_parquet(read_theme_file(src, name), paths[name])
    pd.DataFrame(RATED, columns=["text_a", "text_b", "label"]).to_csv(
        root / "rated.csv", index=False
    )
    return root, paths


def outputs(folder: Path) -> dict:
    return {
        "embeddings": {s: str(folder / f"emb-{s}.parquet") for s in ("human", "llm")},
        "keywords": {s: str(folder / f"kw-{s}.parquet") for s in ("human", "llm")},
        "nulls": {"llm": str(folder / "null-llm.parquet")},
    }


@pytest.fixture(scope="module")
def runs(themes):
    """The embedding job cold (empty cache), warm (same cache) and cold again (new cache)."""
    root, paths = themes
    pairs = str(root / "rated.csv")
    out = {}
    for label, cache in (("cold", "cache1"), ("warm", "cache1"), ("cold2", "cache2")):
        folder = root / label
        folder.mkdir()
        out[label] = child(
            step="embed",
            themes=paths,
            out=outputs(folder),
            spec=SPEC,
            pairs=pairs,
            cache=str(root / cache),
        )
    return root, out


def test_cold_runs_load_the_model_and_write_the_same_bytes(runs):
    _, out = runs
    assert "torch" in out["cold"]["loaded"] and "torch" in out["cold2"]["loaded"]
    assert len(out["cold"]["out"]) == 5
    # Two cold runs (each its own cache) and the warm run: byte-identical files.
    assert out["cold"]["out"] == out["cold2"]["out"] == out["warm"]["out"]


def test_fully_cached_run_imports_no_torch(runs):
    _, out = runs
    assert out["warm"]["loaded"] == []  # neither torch nor scikit-learn (TF-IDF keywords)
    # The llm set has no keywords: TF-IDF is fitted in a child process, and MiniLM runs
    # without sentence-transformers (embed.plain).
    assert out["cold"]["loaded"] == out["cold2"]["loaded"] == ["torch", "transformers"]


def test_keywords_come_from_the_cache_as_computed(runs, themes):
    from themesim.embed.keyword_cache import keyword_path, sets_keywords
    from themesim.embed.texts import theme_keywords, top_tfidf_terms
    from themesim.io.themes import read_themes_parquet

    root, paths = themes
    llm = read_themes_parquet(paths["llm"])
    texts = llm["text"].tolist()
    stored = keyword_path(root / "cache1", texts, 5)
    assert json.loads(stored.read_text()) == top_tfidf_terms(texts, k=5)
    assert not keyword_path(root / "cache1", texts, 4).exists()  # k is part of the key
    # The keyword table of the warm run holds exactly the freshly computed keywords.
    cols = pd.read_parquet(root / "warm" / "kw-llm.parquet")
    per_theme = [cols["keyword"][cols["theme_id"] == i].tolist() for i in llm["theme_id"]]
    assert per_theme == theme_keywords(llm, 5) == top_tfidf_terms(texts, k=5)
    assert per_theme[2][:2] == ["break", "daily"]  # "Gardening as escape": tied, alphabetical
    # A damaged entry is a miss: recomputed and rewritten.
    stored.write_text('[["not", "three lists"]]')
    assert sets_keywords({"llm": llm}, 5, root / "cache1") == {"llm": top_tfidf_terms(texts, 5)}
    assert json.loads(stored.read_text()) == top_tfidf_terms(texts, k=5)


def test_rated_pairs_are_in_the_cache_after_the_embedding_job(runs):
    root, _ = runs
    key = model_key(resolve_model(MINILM), rows=batch_rows(SPEC["batch_size"]))
    texts = [t for a, b, _ in RATED for t in (a, b)]
    found = EmbeddingCache(root / "cache1", key).get([text_sha256(t) for t in texts])
    assert len(found) == len(set(texts)) == 8


def test_calibration_scores_cached_pairs_without_loading_the_model(runs):
    root, _ = runs
    pairs = str(root / "rated.csv")
    cached = child(step="calibration", spec=SPEC, pairs=pairs, cache=str(root / "cache1"))
    # no model: scikit-learn only, whose isotonic fit and ROC the calibration reads
    assert cached["loaded"] == ["sklearn"]
    fresh = child(step="calibration", spec=SPEC, pairs=pairs, cache=str(root / "cache3"))
    assert "torch" in fresh["loaded"]
    scores = np.array(cached["out"]["scores"])
    assert scores.tolist() == fresh["out"]["scores"]  # the cache gives the model's vectors
    assert scores[:2].min() > scores[2:].max()  # matches above non-matches


def test_no_cache_no_rated_pairs(themes, tmp_path):
    # Without a cache the pairs would be encoded twice: the job leaves them out.
    from themesim.steps.embed import calibration_texts

    root, _ = themes
    assert calibration_texts(str(root / "rated.csv"), False) == []
    assert len(calibration_texts(str(root / "rated.csv"), str(tmp_path))) == 8
    # A file calibration will reject does not fail the embedding job.
    assert calibration_texts(str(tmp_path / "missing.csv"), str(tmp_path)) == []


def test_rated_pair_texts_are_those_calibration_reads(themes):
    root, _ = themes
    rated = read_rated_pairs(root / "rated.csv")
    texts = rated_pair_texts(root / "rated.csv")
    assert texts == rated["text_a"].tolist() + rated["text_b"].tolist()
    assert texts[1] == "Money worries, bills" and texts[5] == 'Costs: "care is expensive"'


@pytest.mark.parametrize("given", [None, "ACTIVE"])
def test_openmp_threads_sleep_unless_the_user_says_otherwise(given):
    import os

    code = (
        "import os; from themesim.embed.device import import_torch; import_torch();"
        "print(os.environ['OMP_WAIT_POLICY'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given:
        env["OMP_WAIT_POLICY"] = given
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.stdout.strip() == (given or "PASSIVE"), proc.stderr[-2000:]
