from pathlib import Path

from themesim.config import pair_name, precomputed_csv, prepare
from themesim.pipeline import git_commit

STUDY = prepare(config)
CODE_VERSION = git_commit(workflow.basedir)  # recorded in the report
# Modules each step depends on: editing one reruns its steps (Snakemake cannot see imports).
SRC = Path(workflow.basedir) / "src" / "themesim"
NOTHING = "(?!x)x"  # a wildcard pattern that matches no method


def code(*modules):
    return [str(SRC / m) for m in modules]


def methods_regex(*kinds):
    return "|".join(STUDY.methods_of(*kinds)) or NOTHING


def pair_names(pairs):
    return [pair_name(a, b) for a, b in pairs]


def theme_parquets():
    return [f"results/themes/{s}.parquet" for s in STUDY.sets]


def similarity_files(method, pairs=None):
    pairs = STUDY.pairs if pairs is None else pairs
    return [f"results/similarity/{method}/{p}.parquet" for p in pair_names(pairs)]


def method_op(method):
    return STUDY.methods[method].get("op", STUDY.op)


def embed_settings(method):
    """The settings that change embeddings; thresholds are not among them."""
    spec = STUDY.methods[method]
    return {k: spec.get(k) for k in ("model", "path", "batch_size", "device", "dtype")}


def heatmaps(method):
    return [f"results/plots/{method}/{p}_heatmap.png" for p in pair_names(STUDY.pairs)]


def get_final_output():
    out = [
        "results/transcripts/segments.parquet",
        "results/plots/methods_side_by_side.png",
    ]
    for m in STUDY.methods:
        out += similarity_files(m, STUDY.method_pairs(m))
        out += expand(
            "results/metrics/{method}/{table}.csv",
            method=m,
            table=["comparisons", "themes", "sweep"],
        )
        out += heatmaps(m) + [f"results/plots/{m}/sweep.png"]
    out += ["results/report/summary.html", "results/report/summary.md"]
    return out
