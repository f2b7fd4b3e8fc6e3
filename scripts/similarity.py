from themesim.steps.runner import run_job
from themesim.steps.similarity import similarity_pairs

run_job(snakemake, similarity_pairs)  # noqa: F821 (injected by Snakemake)
