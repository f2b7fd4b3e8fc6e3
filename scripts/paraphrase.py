from themesim.steps.ceiling import paraphrase_reference
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    paraphrase_reference,
    sm.input.themes,
    sm.output[0],
    settings=dict(sm.params.settings),
    cache=sm.params.cache,
    threads=sm.threads,
)
