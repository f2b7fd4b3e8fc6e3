from themesim.steps.metrics import metric_tables
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
run(
    sm.log[0],
    metric_tables,
    method=sm.wildcards.method,
    kind=p.kind,
    pairs=[tuple(x) for x in p.pairs],
    themes=dict(zip(p.sets, sm.input.themes, strict=True)),
    similarities=list(p.similarity_paths),
    within=dict(zip(p.within_sets, p.within_paths, strict=True)),
    nulls=dict(zip(p.null_sets, p.null_paths, strict=True)),
    embeddings=dict(zip(p.embedded_sets, sm.input.embeddings, strict=True)),
    settings=dict(p.settings),
    sweep=dict(p.sweep),
    spec=dict(p.spec),
    out_comparisons=sm.output.comparisons,
    out_themes=sm.output.themes,
    out_sweep=sm.output.sweep,
    out_transport=list(p.transport_paths),
    out_transport_manifest=sm.output.transport_manifest,
    out_splits=sm.output.splits,
    ceiling=sm.input.ceiling[0] if sm.input.ceiling else None,
    reference=p.reference,
    out_decisions=sm.output.decisions,
    out_thresholds=sm.output.thresholds,
    decision=dict(p.decision),
    calibration=list(sm.input.calibration),
)
