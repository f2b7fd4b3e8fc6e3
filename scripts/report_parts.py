from themesim.steps.report_parts import report_parts
from themesim.steps.runner import run_job

run_job(snakemake, report_parts)  # noqa: F821 (injected by Snakemake)
