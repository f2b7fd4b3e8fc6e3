from themesim.steps.plots import runs_plot
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    runs_plot,
    method=sm.wildcards.method,
    runs_csv=sm.input.table,
    runs_matrix=sm.input.matrix,
    out_png=sm.output.png,
    out_svg=sm.output.svg,
)
