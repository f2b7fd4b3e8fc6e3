from themesim.steps.embed import embed_keywords_set
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    embed_keywords_set,
    sm.input.themes,
    sm.output[0],
    method=sm.wildcards.method,
    spec=dict(sm.params.settings),
    top_k=sm.params.top_k,
    threads=sm.threads,
    cache=sm.params.cache,
)
