from themesim.steps.plots import side_by_side
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    side_by_side,
    methods=list(sm.params.methods),
    sweeps=list(sm.input.sweeps),
    thresholds=dict(sm.params.thresholds),
    out_png=sm.output[0],
    out_svg=sm.output.svg,
    comparisons=list(sm.input.comparisons),
    reference=sm.params.reference,
    max_panels=sm.params.max_panels,
)
