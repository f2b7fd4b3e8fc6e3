from themesim.steps.report import headline_tables
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    headline_tables,
    methods=list(sm.params.methods),
    comparisons=list(sm.input.comparisons),
    ran_on={m: list(r) for m, r in dict(sm.params.ran_on).items()},
    out_csv=sm.output.csv,
    out_tex=sm.output.tex,
    out_png=sm.output.png,
    out_svg=sm.output.svg,
    reference=sm.params.reference,
    max_panels=sm.params.max_panels,
)
