from themesim.steps.embed import embed_null_set
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    embed_null_set,
    sm.input.themes,
    sm.output[0],
    method=sm.wildcards.method,
    spec=dict(sm.params.settings),
    pool=sm.params.pool,
    seed=sm.params.seed,
    threads=sm.threads,
    cache=sm.params.cache,
)
