from themesim.steps.coder_agreement import coder_agreement
from themesim.steps.runner import run_job

run_job(snakemake, coder_agreement)  # noqa: F821 (injected by Snakemake)
