from themesim.steps.paraphrase import paraphrase_reference
from themesim.steps.runner import run_job

run_job(snakemake, paraphrase_reference)  # noqa: F821 (injected by Snakemake)
