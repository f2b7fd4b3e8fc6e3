from themesim.steps.calibration import calibration_tables
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
matrix_pairs = [tuple(x) for x in p.matrix_pairs]
run(
    sm.log[0],
    calibration_tables,
    method=sm.wildcards.method,
    kind=p.kind,
    spec=dict(p.spec),
    pairs_file=sm.input.pairs,
    positive_from=p.positive_from,
    bootstrap=dict(p.bootstrap),
    cache=p.cache,
    study_embeddings=list(sm.input.embeddings),
    themes=dict(zip(p.sets, sm.input.themes, strict=True)),
    matrices=dict(zip(matrix_pairs, sm.input.matrices, strict=True)),
    out_csv=sm.output.summary,
    out_fit=sm.output.fit,
    out_scores=sm.output.scores,
    out_png=sm.output.png,
    out_crossfit=sm.output.crossfit,
    comparisons=[tuple(x) for x in p.comparisons],
    study_themes=dict(zip(p.study_sets, sm.input.study_themes, strict=True)),
    prevalence=p.prevalence,
    threads=sm.threads,
)
