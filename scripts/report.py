from themesim.steps.report import summary_report
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    summary_report,
    study=dict(sm.params.study),
    methods=dict(sm.params.methods),
    pairs=list(sm.params.pairs),
    method_pairs={m: list(p) for m, p in dict(sm.params.method_pairs).items()},
    comparisons=list(sm.input.comparisons),
    thresholds=list(sm.input.thresholds),
    themes_tables=list(sm.input.themes_tables),
    sweeps=list(sm.input.sweeps),
    heatmaps=list(sm.params.heatmaps),
    side_by_side_png=sm.input.side_by_side,
    embeddings=list(sm.input.embeddings),
    segments=sm.input.segments,
    sets=dict(sm.params.sets),
    theme_tables=list(sm.input.theme_tables),
    transcripts=list(sm.input.transcripts),
    coded=dict(sm.params.coded),
    config=dict(sm.params.config),
    code_version=sm.params.code_version,
    method_files={m: dict(v) for m, v in dict(sm.params.method_files).items()},
    precomputed=list(sm.input.precomputed),
    headline=dict(sm.params.headline),
    intervals_png=sm.input.intervals,
    confidential=bool(sm.params.confidential),
    judges=dict(zip(sm.params.judge_methods, sm.input.judges, strict=True)),
    out_html=sm.output.html,
    out_md=sm.output.md,
)
