from themesim.steps.ceiling import paraphrase_similarity
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    paraphrase_similarity,
    method=sm.wildcards.method,
    kind=sm.params.kind,
    spec=dict(sm.params.spec),
    paraphrases=sm.input.paraphrases,
    embeddings=sm.input.embeddings[0] if sm.input.embeddings else None,
    out=sm.output[0],
    threads=sm.threads,
    cache=sm.params.cache,
)
