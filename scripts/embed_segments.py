from themesim.steps.embed import embed_segments
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    embed_segments,
    sm.input.segments,
    sm.output[0],
    method=sm.wildcards.method,
    spec=dict(sm.params.settings),
    threads=sm.threads,
    cache=sm.params.cache,
)
