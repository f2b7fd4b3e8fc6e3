from themesim.steps.runner import run
from themesim.steps.similarity import similarity_pairs

sm = snakemake  # noqa: F821 (injected by Snakemake)
sets = list(sm.params.sets)
pairs = [tuple(p) for p in sm.params.pairs]
kind = sm.params.kind
run(
    sm.log[0],
    similarity_pairs,
    method=sm.wildcards.method,
    spec={"kind": kind, "d": sm.params.get("d"), "clamp": sm.params.get("clamp", False)}
    | dict(sm.params.get("judge") or {})
    | dict(sm.params.get("tfidf") or {}),
    pairs=pairs,
    themes=dict(zip(sets, sm.input.themes, strict=True)),
    outputs=list(sm.output),
    embeddings=(
        dict(zip(sets, sm.input.embeddings, strict=True))
        if kind in ("sentence_transformer", "abtt")
        else None
    ),
    matrices=dict(zip(pairs, sm.input.matrices, strict=True)) if kind == "precomputed" else None,
    cache=sm.params.get("cache"),
    threads=sm.threads,
)
