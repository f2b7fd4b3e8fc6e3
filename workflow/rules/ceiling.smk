# The paraphrase ceiling (config ceiling:, docs/metrics.md): off unless ceiling.active.


rule paraphrase_reference:
    input:
        themes=f"results/themes/{STUDY.reference}.parquet",
        code=code("paraphrase.py"),
    output:
        "results/ceiling/paraphrases.csv",
    log:
        "logs/ceiling/paraphrases.log",
    threads: 2
    resources:
        llm_server=llm_server_for(paraphrase_settings()),
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
