from themesim.steps.plots import pair_heatmaps
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    pair_heatmaps,
    method=sm.wildcards.method,
    pairs=[tuple(p) for p in sm.params.pairs],
    themes=dict(zip(sm.params.sets, sm.input.themes, strict=True)),
    similarities=list(sm.params.similarity_paths),
    thresholds_csv=sm.input.thresholds,
    out_dir=sm.output[0],
    comparisons_csv=sm.input.comparisons,
    scale=dict(sm.params.scale),
    max_heatmaps=sm.params.max_heatmaps,
    decisions=sm.input.decisions,
)
