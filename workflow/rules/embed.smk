rule embed:
    input:
        themes=theme_parquets(),
        segments=segment_parquets(),
        code=code("embed.py"),
    output:
        embeddings=expand("results/embeddings/{{method}}/{set}.parquet", set=STUDY.sets),
        keywords=expand(
            "results/keyword_embeddings/{{method}}/{set}.parquet", set=STUDY.sets
        ),
        nulls=expand("results/nulls/{{method}}/{set}.parquet", set=embedded_null_sets()),
        segments=segment_outputs(),
    log:
        "logs/embed/{method}.log",
    benchmark:
        "benchmarks/embed/{method}.tsv"
    wildcard_constraints:
        method=methods_with("own_embeddings"),
    threads: embed_threads()
    resources:
        mem_mb=lambda wc: embed_mem_mb(wc.method),
        gpu=lambda wc: method_gpus(wc.method),
    params:
        settings=lambda wc: embed_settings(wc.method),
        cache=embedding_cache(),
        sets=list(STUDY.sets),
        null_sets=embedded_null_sets(),
        pool=STUDY.metrics["null_model"]["pool"],
        seed=STUDY.metrics["null_model"]["seed"],
        top_k=STUDY.metrics["quality"]["keywords_top_k"],
    script:
        "../../scripts/embed.py"
