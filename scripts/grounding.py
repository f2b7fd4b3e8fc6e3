from themesim.steps.grounding import grounding_tables_and_plots
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
run(
    sm.log[0],
    grounding_tables_and_plots,
    method=sm.wildcards.method,
    pairs=[tuple(x) for x in p.pairs],
    themes=dict(zip(p.sets, sm.input.themes, strict=True)),
    labels=dict(zip(p.sets, p.labels, strict=True)),
    quotes=dict(zip(p.sets, p.quotes, strict=True)),
    segments_path=sm.input.segments,
    similarities=list(p.similarity_paths),
    thresholds_csv=sm.input.thresholds,
    settings=dict(p.settings),
    out_csv=sm.output.table,
    out_pairs=sm.output.pairs,
    out_transcripts=sm.output.pairs_by_transcript,
    out_long=list(p.long),
    scale=dict(p.scale),
    bases=list(p.bases),
    coder_sets=list(p.coder_sets),
    assign=p.assign,
    coders=dict(p.coders),
    codebooks=dict(p.codebooks),
    out_heatmaps=list(p.heatmaps),
    out_scatter=sm.output.scatter,
)
