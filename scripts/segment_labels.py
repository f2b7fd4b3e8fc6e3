from themesim.steps.runner import run
from themesim.steps.segment_labels import method_segment_labels

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
sets = list(p.sets)
run(
    sm.log[0],
    method_segment_labels,
    method=sm.wildcards.method,
    spec=dict(p.spec),
    sets=sets,
    themes=dict(zip(sets, sm.input.themes, strict=True)),
    segments_path=sm.input.segments,
    transcripts=list(sm.input.transcripts),
    coded=dict(zip(p.coded_sets, sm.input.coded, strict=True)),
    levels=dict(p.levels),
    users=dict(p.users),
    theme_embeddings=dict(zip(p.assigned_sets, sm.input.embeddings, strict=True)),
    segment_embeddings=sm.input.segment_embeddings[0] if sm.input.segment_embeddings else None,
    assign=p.assign,
    assign_threshold=p.assign_threshold,
    quote_cutoff=p.quote_cutoff,
    exclude_speakers=list(p.exclude_speakers),
    coder=dict(p.coder),
    coder_kinds=dict(p.coder_kinds),
    llm_scores=dict(zip(p.llm_sets, sm.input.llm_scores, strict=True)),
    out=dict(zip(sets, p.labels, strict=True)),
    out_quotes=dict(zip(sets, p.quotes, strict=True)),
)
