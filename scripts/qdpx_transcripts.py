from themesim.steps.ingest import qdpx_transcripts
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(sm.log[0], qdpx_transcripts, list(sm.input.projects), list(sm.output))
