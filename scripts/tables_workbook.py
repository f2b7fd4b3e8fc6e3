from themesim.steps.report import tables_workbook
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    tables_workbook,
    tables=dict(zip(sm.params.titles, sm.input.tables, strict=True)),
    out=sm.output[0],
)
