from themesim.steps.coder_agreement import coder_agreement
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
methods = dict(p.methods)
labels, k = {}, 0
for m, spec in methods.items():
    for s in spec["sets"]:
        labels[(m, s)] = p.labels[k]
        k += 1
run(
    sm.log[0],
    coder_agreement,
    methods=methods,
    labels=labels,
    themes=dict(zip(p.sets, sm.input.themes, strict=True)),
    segments_path=sm.input.segments,
    exclude_speakers=list(p.exclude_speakers),
    out=sm.output.table,
)
