from themesim.steps.coder_llm import coder_llm
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
sets = list(p.sets)
run(
    sm.log[0],
    coder_llm,
    themes=dict(zip(sets, sm.input.themes, strict=True)),
    segments_path=sm.input.segments,
    llm=dict(p.llm) | {"threads": p.llm.get("threads") or sm.threads},
    exclude_speakers=list(p.exclude_speakers),
    cache=p.cache,
    out=dict(zip(sets, sm.output.scores, strict=True)),
)
