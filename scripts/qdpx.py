from themesim.steps.qdpx import study_qdpx
from themesim.steps.runner import run_job

run_job(snakemake, study_qdpx)  # noqa: F821 (injected by Snakemake)
