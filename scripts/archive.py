from themesim.steps.archive import archive
from themesim.steps.runner import run_job

run_job(snakemake, archive)  # noqa: F821 (injected by Snakemake)
