# The paraphrase ceiling (config ceiling:, docs/metrics.md): off unless ceiling.active.


def has_ceiling(method):
    """A paraphrase ceiling for this method: active, and a kind that can score paraphrases."""
    from themesim.steps.ceiling import CEILING_KINDS

    return bool(STUDY.ceiling.get("active")) and kind(method) in CEILING_KINDS


def ceiling_files(method):
    """The method's paraphrase similarities, an input of its metrics ([] when none)."""
    return [f"results/ceiling/{method}.parquet"] if has_ceiling(method) else []


def paraphrase_settings():
    """Settings of the paraphrase calls (themesim.llm.paraphrase.ParaphraseSettings)."""
    return {k: v for k, v in STUDY.ceiling.items() if k != "active" and v is not None}


def ceiling_spec(method):
    """What changes a method's paraphrase scores: its embedding or TF-IDF settings."""
    if kind(method) == "tfidf":
        return tfidf_options(STUDY.methods[method])
    return embed_settings(method)


rule paraphrase_reference:
    input:
        themes=f"results/themes/{STUDY.reference}.parquet",
        code=code("paraphrase.py"),
    output:
        "results/ceiling/paraphrases.csv",
    log:
        "logs/ceiling/paraphrases.log",
    threads: 2
    params:
        settings=paraphrase_settings(),
        cache="results/cache/paraphrase.sqlite",
    script:
        "../../scripts/paraphrase.py"


rule ceiling_similarity:
    input:
        paraphrases="results/ceiling/paraphrases.csv",
        embeddings=lambda wc: embedding_files(wc.method, [STUDY.reference]),
        code=code("ceiling.py"),
    output:
        "results/ceiling/{method}.parquet",
    log:
        "logs/ceiling/{method}.log",
    wildcard_constraints:
        method=regex_of(m for m in STUDY.methods if has_ceiling(m)),
    threads: 2
    params:
        kind=lambda wc: kind(wc.method),
        spec=lambda wc: ceiling_spec(wc.method),
        cache=embedding_cache(),
    script:
        "../../scripts/ceiling.py"
