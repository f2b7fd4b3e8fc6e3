from themesim.steps.runner import run
from themesim.steps.verdicts import verdicts

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
methods = list(p.methods)
run(
    sm.log[0],
    verdicts,
    out=sm.output.verdicts,
    methods_order=methods,
    comparisons=dict(zip(methods, sm.input.comparisons, strict=True)),
    thresholds=dict(zip(methods, sm.input.thresholds, strict=True)),
    themes_tables=dict(zip(methods, sm.input.themes_tables, strict=True)),
    similarity=dict(zip(methods, sm.input.similarity, strict=True)),
    theme_tables=dict(zip(p.sets, sm.input.themes, strict=True)),
    grounding_pairs=dict(zip(p.grounded, sm.input.grounding_pairs, strict=True)),
    calibration_fits=dict(zip(p.calibrated, sm.input.calibration_fits, strict=True)),
    reference=p.reference,
    analysts=list(p.analysts),
    generators={k: list(v) for k, v in dict(p.generators).items()},
    equivalence=dict(p.equivalence),
    primary=dict(p.primary) if p.primary else None,
    preferred=list(p.preferred),
)
