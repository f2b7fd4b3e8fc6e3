from themesim.steps.ingest_transcripts import ingest_transcript_files
from themesim.steps.runner import run_job

run_job(snakemake, ingest_transcript_files)  # noqa: F821 (injected by Snakemake)
