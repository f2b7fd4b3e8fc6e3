from themesim.steps.generate import generate_theme_runs
from themesim.steps.runner import run_job

run_job(snakemake, generate_theme_runs)  # noqa: F821 (injected by Snakemake)
