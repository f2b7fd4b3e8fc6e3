from themesim.steps.report import summary_report
from themesim.steps.runner import run_job

run_job(snakemake, summary_report)  # noqa: F821 (injected by Snakemake)
