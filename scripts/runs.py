from themesim.steps.runner import run
from themesim.steps.runs import runs_tables_and_plot

sm = snakemake  # noqa: F821 (injected by Snakemake)
runs = list(sm.params.runs)
run(
    sm.log[0],
    runs_tables_and_plot,
    method=sm.wildcards.method,
    kind=sm.params.kind,
    groups={g: list(members) for g, members in sm.params.groups.items()},
    themes=dict(zip(runs, sm.input.themes, strict=True)),
    embeddings=dict(zip(runs, sm.input.embeddings, strict=True)) if sm.input.embeddings else {},
    clamp=sm.params.clamp,
    out_table=sm.output.table,
    out_matrix=sm.output.matrix,
    out_png=sm.output.png,
    out_svg=sm.output.svg,
)
