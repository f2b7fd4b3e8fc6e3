from themesim.steps.grounding import grounding_tables_and_plots
from themesim.steps.runner import run_job

run_job(snakemake, grounding_tables_and_plots)  # noqa: F821 (injected by Snakemake)
