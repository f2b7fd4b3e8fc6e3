rule embed:
    input:
        themes="results/themes/{set}.parquet",
        code=code("embed.py"),
    output:
        "results/embeddings/{method}/{set}.parquet",
    log:
        "logs/embed/{method}/{set}.log",
    benchmark:
        "benchmarks/embed/{method}/{set}.tsv"
    wildcard_constraints:
        method=methods_regex("sentence_transformer"),
    threads: 2
    resources:
        mem_mb=4000,
    params:
        settings=lambda wc: embed_settings(wc.method),
    script:
        "../../scripts/embed.py"
