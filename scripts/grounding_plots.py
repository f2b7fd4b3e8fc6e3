from themesim.steps.grounding import grounding_plots
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
run(
    sm.log[0],
    grounding_plots,
    method=sm.wildcards.method,
    pairs=[tuple(x) for x in p.pairs],
    themes=dict(zip(p.sets, sm.input.themes, strict=True)),
    table=sm.input.table,
    pair_tables=list(sm.input.long),
    out_heatmaps=list(sm.output.heatmaps),
    out_scatter=sm.output.scatter,
)
