from themesim.steps.ceiling import paraphrase_similarity
from themesim.steps.runner import run_job

run_job(snakemake, paraphrase_similarity)  # noqa: F821 (injected by Snakemake)
