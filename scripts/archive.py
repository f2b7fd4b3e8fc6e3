from themesim.archive.build import build_archive
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
run(
    sm.log[0],
    build_archive,
    sm.output[0],
    config=dict(p.config),
    study=dict(p.study),
    sets=dict(p.sets),
    transcripts=list(p.transcripts),
    coded=dict(p.coded),
    precomputed={m: list(f) for m, f in dict(p.precomputed).items()},
    results=list(sm.input.results),
    judge_cache=p.judge_cache,
    caches=list(p.caches),
    code=dict(zip(p.code_names, sm.input.code, strict=True)),
    code_version=p.code_version,
    confidential=bool(p.confidential),
    authors=list(p.authors),
)
