from themesim.steps.plots import sweep_plot
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    sweep_plot,
    method=sm.wildcards.method,
    sweep_csv=sm.input.sweep,
    thresholds_csv=sm.input.thresholds,
    out_png=sm.output.sweep,
    out_svg=sm.output.sweep_svg,
    reference=sm.params.reference,
    max_panels=sm.params.max_panels,
)
