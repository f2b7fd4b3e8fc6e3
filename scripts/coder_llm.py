from themesim.steps.coder_llm import coder_llm
from themesim.steps.runner import run_job

run_job(snakemake, coder_llm)  # noqa: F821 (injected by Snakemake)
