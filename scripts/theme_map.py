from themesim.steps.plots import theme_map_plot
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
sets = list(sm.params.sets)
run(
    sm.log[0],
    theme_map_plot,
    method=sm.wildcards.method,
    kind=sm.params.kind,
    themes=dict(zip(sets, sm.input.themes, strict=True)),
    embeddings=dict(zip(sets, sm.input.embeddings, strict=True)) if sm.input.embeddings else {},
    themes_csv=sm.input.theme_table,
    op=sm.params.op,
    d=sm.params.d,
    out_png=sm.output.png,
    out_svg=sm.output.svg,
)
