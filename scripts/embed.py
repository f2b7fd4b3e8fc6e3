from themesim.steps.embed import embed_method
from themesim.steps.runner import run_job

run_job(snakemake, embed_method)  # noqa: F821 (injected by Snakemake)
