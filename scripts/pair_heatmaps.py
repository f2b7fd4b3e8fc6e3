from themesim.steps.pair_heatmaps import pair_heatmaps
from themesim.steps.runner import run_job

run_job(snakemake, pair_heatmaps)  # noqa: F821 (injected by Snakemake)
