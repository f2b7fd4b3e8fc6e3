from pathlib import Path

from themesim.steps.embed import embed_method
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
sets, null_sets = list(sm.params.sets), list(sm.params.null_sets)
Path(sm.output.nulls).mkdir(parents=True, exist_ok=True)  # a folder output, maybe empty
run(
    sm.log[0],
    embed_method,
    dict(zip(sets, sm.input.themes, strict=True)),
    {
        "embeddings": dict(zip(sets, sm.output.embeddings, strict=True)),
        "keywords": dict(zip(sets, sm.output.keywords, strict=True)),
        "nulls": dict(zip(null_sets, sm.params.null_paths, strict=True)),
        "segments": sm.output.segments[0] if sm.output.segments else None,
    },
    method=sm.wildcards.method,
    spec=dict(sm.params.settings),
    null_sets=null_sets,
    pool=sm.params.pool,
    seed=sm.params.seed,
    top_k=sm.params.top_k,
    segments=sm.input.segments[0] if sm.input.segments else None,
    pairs=sm.input.pairs[0] if sm.input.pairs else None,
    threads=sm.threads,
    cache=sm.params.cache,
)
