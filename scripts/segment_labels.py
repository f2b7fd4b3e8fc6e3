from themesim.steps.grounding import segment_labels
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
run(
    sm.log[0],
    segment_labels,
    method=sm.wildcards.method,
    spec=dict(p.spec),
    set_name=sm.wildcards.set,
    themes_path=sm.input.themes,
    segments_path=sm.input.segments,
    transcripts=list(sm.input.transcripts),
    coded=sm.input.coded[0] if sm.input.coded else None,
    level=p.level,
    theme_embeddings=sm.input.embeddings[0] if sm.input.embeddings else None,
    segment_embeddings=sm.input.segment_embeddings[0] if sm.input.segment_embeddings else None,
    assign=p.assign,
    assign_threshold=p.assign_threshold,
    quote_cutoff=p.quote_cutoff,
    exclude_speakers=list(p.exclude_speakers),
    out=sm.output.labels,
    out_quotes=sm.output.quotes,
)
