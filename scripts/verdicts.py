from themesim.steps.runner import run_job
from themesim.steps.verdicts import verdicts

run_job(snakemake, verdicts)  # noqa: F821 (injected by Snakemake)
