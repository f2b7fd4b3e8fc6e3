from themesim.steps.ingest import ingest_theme_file
from themesim.steps.runner import run_job

run_job(snakemake, ingest_theme_file)  # noqa: F821 (injected by Snakemake)
