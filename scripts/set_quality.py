from themesim.steps.quality import set_quality_table
from themesim.steps.runner import run_job

run_job(snakemake, set_quality_table)  # noqa: F821 (injected by Snakemake)
