rule embed:
    input:
        themes="results/themes/{set}.parquet",
        code=code("embed.py"),
    output:
        "results/embeddings/{method}/{set}.parquet",
    wildcard_constraints:
        method=methods_regex("sentence_transformer"),
    params:
        settings=lambda wc: embed_settings(wc.method),
    threads: 2
    resources:
        mem_mb=4000,
    log:
        "logs/embed/{method}/{set}.log",
    benchmark:
        "benchmarks/embed/{method}/{set}.tsv"
    script:
        "../../scripts/embed.py"
