from themesim.steps.plots import comparison_heatmap
from themesim.steps.runner import run_job

run_job(snakemake, comparison_heatmap)  # noqa: F821 (injected by Snakemake)
