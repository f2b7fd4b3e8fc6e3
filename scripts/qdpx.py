from themesim.steps.qdpx import study_qdpx
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
sets = list(p.sets)
run(
    sm.log[0],
    study_qdpx,
    method=sm.wildcards.method,
    sets=sets,
    themes=dict(zip(sets, sm.input.themes, strict=True)),
    labels=dict(zip(sets, p.labels, strict=True)),
    coded=dict(zip(p.coded_sets, sm.input.coded, strict=True)),
    levels=dict(p.levels),
    users=dict(p.users),
    segments_path=sm.input.segments,
    transcripts=list(sm.input.transcripts),
    out=sm.output[0],
    coder_sets=list(p.coder_sets),
)
