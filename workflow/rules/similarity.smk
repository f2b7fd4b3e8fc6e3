# One job per method computes every pair, so the DAG grows with methods, not pairs.


rule similarity_embedding:
    input:
        themes=theme_parquets(),
        embeddings=lambda wc: expand(
            "results/embeddings/{method}/{set}.parquet",
            method=wc.method,
            set=STUDY.sets,
        ),
        code=code("similarity.py"),
    output:
        expand(
            "results/similarity/{{method}}/{pair}.parquet",
            pair=pair_names(STUDY.pairs + STUDY.within),
        ),
    log:
        "logs/similarity/{method}.log",
    benchmark:
        "benchmarks/similarity/{method}.tsv"
    wildcard_constraints:
        method=methods_regex("sentence_transformer"),
    params:
        sets=list(STUDY.sets),
        pairs=STUDY.pairs + STUDY.within,
        kind="sentence_transformer",
    script:
        "../../scripts/similarity.py"


rule similarity_tfidf:
    input:
        themes=theme_parquets(),
        code=code("similarity.py"),
    output:
        expand(
            "results/similarity/{{method}}/{pair}.parquet",
            pair=pair_names(STUDY.pairs + STUDY.within),
        ),
    log:
        "logs/similarity/{method}.log",
    benchmark:
        "benchmarks/similarity/{method}.tsv"
    wildcard_constraints:
        method=methods_regex("tfidf"),
    params:
        sets=list(STUDY.sets),
        pairs=STUDY.pairs + STUDY.within,
        kind="tfidf",
        tfidf=lambda wc: tfidf_options(STUDY.methods[wc.method]),
    script:
        "../../scripts/similarity.py"


rule similarity_precomputed:
    input:
        themes=theme_parquets(),
        matrices=lambda wc: [
            precomputed_csv(STUDY.methods[wc.method], a, b) for a, b in STUDY.pairs
        ],
        code=code("similarity.py"),
    output:
        expand(
            "results/similarity/{{method}}/{pair}.parquet",
            pair=pair_names(STUDY.pairs),
        ),
    log:
        "logs/similarity/{method}.log",
    wildcard_constraints:
        method=methods_regex("precomputed"),
    params:
        sets=list(STUDY.sets),
        pairs=STUDY.pairs,
        kind="precomputed",
        clamp=lambda wc: bool(STUDY.methods[wc.method].get("clamp", False)),
    script:
        "../../scripts/similarity.py"


rule similarity_abtt:
    input:
        themes=theme_parquets(),
        embeddings=lambda wc: expand(
            "results/embeddings/{method}/{set}.parquet",
            method=STUDY.embeddings_of(wc.method),
            set=STUDY.sets,
        ),
        code=code("similarity.py"),
    output:
        expand(
            "results/similarity/{{method}}/{pair}.parquet",
            pair=pair_names(STUDY.pairs + STUDY.within),
        ),
    log:
        "logs/similarity/{method}.log",
    benchmark:
        "benchmarks/similarity/{method}.tsv"
    wildcard_constraints:
        method=methods_regex("abtt"),
    params:
        sets=list(STUDY.sets),
        pairs=STUDY.pairs + STUDY.within,
        kind="abtt",
        d=lambda wc: STUDY.methods[wc.method].get("d"),
    script:
        "../../scripts/similarity.py"


rule similarity_judge:
    input:
        themes=theme_parquets(),
        code=code("similarity.py"),
    output:
        expand(
            "results/similarity/{{method}}/{pair}.parquet",
            pair=pair_names(STUDY.pairs),
        ),
    log:
        "logs/similarity/{method}.log",
    wildcard_constraints:
        method=methods_regex("llm_judge"),
    threads: 2
    resources:
        mem_mb=4000,
    params:
        sets=list(STUDY.sets),
        pairs=STUDY.pairs,
        kind="llm_judge",
        judge=lambda wc: judge_settings(wc.method),
        # An accumulating cache, not an output: a failed job must never delete it.
        cache="results/cache/judge.sqlite",
    script:
        "../../scripts/similarity.py"
