from themesim.steps.runner import run
from themesim.steps.similarity import similarity_pairs

sm = snakemake  # noqa: F821 (injected by Snakemake)
sets = list(sm.params.sets)
pairs = [tuple(p) for p in sm.params.pairs]
embeddings = list(sm.input.get("embeddings", []))
matrices = list(sm.input.get("matrices", []))
run(
    sm.log[0],
    similarity_pairs,
    method=sm.wildcards.method,
    spec=dict(sm.params.spec),
    pairs=pairs,
    themes=dict(zip(sets, sm.input.themes, strict=True)),
    paths=list(sm.params.paths),
    manifest=sm.output.manifest,
    embeddings=dict(zip(sets, embeddings, strict=True)) if embeddings else None,
    matrices=dict(zip(pairs, matrices, strict=True)) if matrices else None,
    cache=sm.params.get("cache"),
    threads=sm.threads,
    rated_pairs=sm.input.rated[0] if sm.input.get("rated") else None,
)
