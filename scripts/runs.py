from themesim.steps.runner import run_job
from themesim.steps.runs import runs_tables_and_plot

run_job(snakemake, runs_tables_and_plot)  # noqa: F821 (injected by Snakemake)
