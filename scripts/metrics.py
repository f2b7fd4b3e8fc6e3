from themesim.steps.metrics import metric_tables
from themesim.steps.runner import run_job

run_job(snakemake, metric_tables)  # noqa: F821 (injected by Snakemake)
