from themesim.pipeline import metric_tables
from themesim.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    metric_tables,
    method=sm.wildcards.method,
    pairs=[tuple(p) for p in sm.params.pairs],
    themes=dict(zip(sm.params.sets, sm.input.themes, strict=True)),
    similarities=list(sm.input.similarity),
    thresholds=list(sm.params.thresholds),
    op=sm.params.op,
    sweep=dict(sm.params.sweep),
    out_comparisons=sm.output.comparisons,
    out_themes=sm.output.themes,
    out_sweep=sm.output.sweep,
)
