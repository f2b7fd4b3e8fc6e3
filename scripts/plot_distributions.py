from themesim.steps.plots import distribution_plots
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    distribution_plots,
    method=sm.wildcards.method,
    themes_csv=sm.input.themes,
    op=sm.params.op,
    gamma=float(sm.params.gamma),
    out_distributions=sm.output.distributions,
    out_confidence=sm.output.confidence,
    out_distributions_svg=sm.output.distributions_svg,
    out_confidence_svg=sm.output.confidence_svg,
    reference=sm.params.reference,
    max_panels=sm.params.max_panels,
)
