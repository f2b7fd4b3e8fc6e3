from themesim.steps.plots import method_plots
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    method_plots,
    method=sm.wildcards.method,
    pairs=[tuple(p) for p in sm.params.pairs],
    themes=dict(zip(sm.params.sets, sm.input.themes, strict=True)),
    similarities=list(sm.params.similarity_paths),
    sweep_csv=sm.input.sweep,
    thresholds_csv=sm.input.thresholds,
    op=sm.params.op,
    out_heatmaps=list(sm.output.heatmaps),
    out_sweep=sm.output.sweep,
    out_heatmaps_svg=list(sm.output.heatmaps_svg),
    out_sweep_svg=sm.output.sweep_svg,
    scale=dict(sm.params.scale),
    reference=sm.params.reference,
    max_panels=sm.params.max_panels,
)
