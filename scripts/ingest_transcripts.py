from themesim.steps.ingest import ingest_transcripts
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(sm.log[0], ingest_transcripts, list(sm.input.transcripts), sm.output[0])
