from themesim.steps.qdpx_transcripts import qdpx_transcripts
from themesim.steps.runner import run_job

run_job(snakemake, qdpx_transcripts)  # noqa: F821 (injected by Snakemake)
