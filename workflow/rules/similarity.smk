# One job per method computes every pair, so the DAG grows with methods, not pairs: a job
# declares its manifest and the reference pairs' files; the other pairs of
# comparisons.all_pairs sit beside them, listed in the manifest (themesim.io.manifest).
# Each kind names the rule that writes its files (themesim.kinds: similarity_rule); the
# rules differ only in what they read and write, the step asks the kind how to score.


rule similarity_embedding:
    input:
        themes=theme_parquets(),
        embeddings=lambda wc: theme_map_embeddings(wc.method),
        code=code("similarity.py"),
    output:
        manifest="results/similarity/{method}/manifest.csv",
        pairs=expand(
            "results/similarity/{{method}}/{pair}.parquet",
            pair=rule_pairs("similarity_embedding", STUDY.pairs + STUDY.within),
        ),
    log:
        "logs/similarity/{method}.log",
    benchmark:
        "benchmarks/similarity/{method}.tsv"
    wildcard_constraints:
        method=similarity_methods("similarity_embedding"),
    params:
        sets=list(STUDY.sets),
        pairs=STUDY.pairs + STUDY.within,
        paths=lambda wc: similarity_files(wc.method, STUDY.pairs + STUDY.within),
        spec=lambda wc: similarity_spec(wc.method),
    script:
        "../../scripts/similarity.py"


rule similarity_tfidf:
    input:
        themes=theme_parquets(),
        code=code("similarity.py"),
    output:
        manifest="results/similarity/{method}/manifest.csv",
        pairs=expand(
            "results/similarity/{{method}}/{pair}.parquet",
            pair=rule_pairs("similarity_tfidf", STUDY.pairs + STUDY.within),
        ),
    log:
        "logs/similarity/{method}.log",
    benchmark:
        "benchmarks/similarity/{method}.tsv"
    wildcard_constraints:
        method=similarity_methods("similarity_tfidf"),
    params:
        sets=list(STUDY.sets),
        pairs=STUDY.pairs + STUDY.within,
        paths=lambda wc: similarity_files(wc.method, STUDY.pairs + STUDY.within),
        spec=lambda wc: similarity_spec(wc.method),
    script:
        "../../scripts/similarity.py"


rule similarity_precomputed:
    input:
        themes=theme_parquets(),
        matrices=lambda wc: matrix_files(wc.method, STUDY.pairs),
        code=code("similarity.py"),
    output:
        manifest="results/similarity/{method}/manifest.csv",
        pairs=expand(
            "results/similarity/{{method}}/{pair}.parquet",
            pair=rule_pairs("similarity_precomputed", STUDY.pairs),
        ),
    log:
        "logs/similarity/{method}.log",
    wildcard_constraints:
        method=similarity_methods("similarity_precomputed"),
    params:
        sets=list(STUDY.sets),
        pairs=STUDY.pairs,
        paths=lambda wc: similarity_files(wc.method, STUDY.pairs),
        spec=lambda wc: similarity_spec(wc.method),
    script:
        "../../scripts/similarity.py"


rule similarity_abtt:
    input:
        themes=theme_parquets(),
        embeddings=lambda wc: theme_map_embeddings(wc.method),
        code=code("similarity.py"),
    output:
        manifest="results/similarity/{method}/manifest.csv",
        pairs=expand(
            "results/similarity/{{method}}/{pair}.parquet",
            pair=rule_pairs("similarity_abtt", STUDY.pairs + STUDY.within),
        ),
    log:
        "logs/similarity/{method}.log",
    benchmark:
        "benchmarks/similarity/{method}.tsv"
    wildcard_constraints:
        method=similarity_methods("similarity_abtt"),
    params:
        sets=list(STUDY.sets),
        pairs=STUDY.pairs + STUDY.within,
        paths=lambda wc: similarity_files(wc.method, STUDY.pairs + STUDY.within),
        spec=lambda wc: similarity_spec(wc.method),
    script:
        "../../scripts/similarity.py"


rule similarity_judge:
    input:
        themes=theme_parquets(),
        code=code("similarity.py"),
    output:
        manifest="results/similarity/{method}/manifest.csv",
        pairs=expand(
            "results/similarity/{{method}}/{pair}.parquet",
            pair=rule_pairs("similarity_judge", STUDY.pairs),
        ),
    log:
        "logs/similarity/{method}.log",
    wildcard_constraints:
        method=similarity_methods("similarity_judge"),
    threads: 2
    resources:
        mem_mb=4000,
    params:
        sets=list(STUDY.sets),
        pairs=STUDY.pairs,
        paths=lambda wc: similarity_files(wc.method, STUDY.pairs),
        spec=lambda wc: similarity_spec(wc.method),
        # An accumulating cache, not an output: a failed job must never delete it.
        cache=JUDGE_CACHE,
    script:
        "../../scripts/similarity.py"
