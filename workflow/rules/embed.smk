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
        method=methods_with("own_embeddings"),
    threads: 2
    resources:
        mem_mb=lambda wc: embed_mem_mb(wc.method),
        gpu=lambda wc: method_gpus(wc.method),
    params:
        settings=lambda wc: embed_settings(wc.method),
        cache=embedding_cache(),
    script:
        "../../scripts/embed.py"


rule embed_null:
    input:
        themes="results/themes/{set}.parquet",
        code=code("embed_null.py"),
    output:
        "results/nulls/{method}/{set}.parquet",
    log:
        "logs/embed/{method}/null_{set}.log",
    benchmark:
        "benchmarks/embed/{method}/null_{set}.tsv"
    wildcard_constraints:
        method=methods_with("own_embeddings"),
    threads: 2
    resources:
        mem_mb=lambda wc: embed_mem_mb(wc.method),
        gpu=lambda wc: method_gpus(wc.method),
    params:
        settings=lambda wc: embed_settings(wc.method),
        cache=embedding_cache(),
        pool=STUDY.metrics["null_model"]["pool"],
        seed=STUDY.metrics["null_model"]["seed"],
    script:
        "../../scripts/embed_null.py"


rule embed_keywords:
    input:
        themes="results/themes/{set}.parquet",
        code=code("embed_keywords.py"),
    output:
        "results/keyword_embeddings/{method}/{set}.parquet",
    log:
        "logs/embed/{method}/keywords_{set}.log",
    wildcard_constraints:
        method=methods_with("own_embeddings"),
    threads: 2
    resources:
        mem_mb=lambda wc: embed_mem_mb(wc.method),
        gpu=lambda wc: method_gpus(wc.method),
    params:
        settings=lambda wc: embed_settings(wc.method),
        cache=embedding_cache(),
        top_k=STUDY.metrics["quality"]["keywords_top_k"],
    script:
        "../../scripts/embed_keywords.py"


rule embed_segments:
    input:
        segments="results/transcripts/segments.parquet",
        code=code("embed_segments.py"),
    output:
        "results/segment_embeddings/{method}.parquet",
    log:
        "logs/embed/{method}/segments.log",
    benchmark:
        "benchmarks/embed/{method}/segments.tsv"
    wildcard_constraints:
        method=methods_with("own_embeddings"),
    threads: 2
    resources:
        mem_mb=lambda wc: embed_mem_mb(wc.method),
        gpu=lambda wc: method_gpus(wc.method),
    params:
        settings=lambda wc: embed_settings(wc.method),
        cache=embedding_cache(),
    script:
        "../../scripts/embed_segments.py"
