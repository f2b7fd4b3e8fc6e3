from themesim.steps.plots import comparison_heatmap
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    comparison_heatmap,
    method=sm.wildcards.method,
    pair=tuple(sm.params.pair),
    themes=dict(zip(sm.params.pair, sm.input.themes, strict=True)),
    similarity=sm.params.similarity_path,
    thresholds_csv=sm.input.thresholds,
    out_png=sm.output.png,
    out_svg=sm.output.svg,
    scale=dict(sm.params.scale),
    decisions=sm.input.decisions,
)
