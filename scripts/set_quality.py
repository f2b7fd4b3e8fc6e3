from themesim.steps.quality import set_quality_table
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
sets = list(sm.params.sets)
run(
    sm.log[0],
    set_quality_table,
    method=sm.wildcards.method,
    kind=sm.params.kind,
    themes=dict(zip(sets, sm.input.themes, strict=True)),
    within=dict(zip(sm.params.within_sets, sm.params.within_paths, strict=True)),
    embeddings=dict(zip(sm.params.embedded_sets, sm.input.embeddings, strict=True)),
    keyword_embeddings=dict(zip(sm.params.embedded_sets, sm.input.keywords, strict=True)),
    segment_embeddings=sm.input.segment_embeddings[0] if sm.input.segment_embeddings else None,
    segments=sm.input.segments,
    settings=dict(sm.params.settings),
    out_sets=sm.output.sets,
    out_themes=sm.output.themes,
)
