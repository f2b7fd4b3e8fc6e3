# One job per method computes every pair, so the DAG grows with methods, not pairs: a job
# declares its manifest and the reference pairs' files; the other pairs of
# comparisons.all_pairs sit beside them, listed in the manifest (themesim.io.manifest).
# Each kind names the rule that writes its files (themesim.kinds: similarity_rule); the
# rules differ only in what they read and write, the step asks the kind how to score.
# Each rule has a copy per group of methods restricted to the same `comparisons:`; a kind
# that reads no embeddings reads only the theme tables of the method's own comparisons.


for suffix, pattern, pairs in pair_variants(rule_methods("similarity_embedding")):

    share_cluster_settings("similarity_embedding", suffix)

    rule:
        name:
            f"similarity_embedding{suffix}"
        input:
            themes=theme_parquets(),
            embeddings=lambda wc: theme_map_embeddings(wc.method),
            code=code("similarity.py"),
        output:
            manifest="results/similarity/{method}/manifest.csv",
            pairs=expand(
                "results/similarity/{{method}}/{pair}.parquet",
                pair=rule_pairs(
                    "similarity_embedding", pairs + within_of(sets_of(pairs)), pairs
                ),
            ),
        log:
            "logs/similarity/{method}.log",
        benchmark:
            "benchmarks/similarity/{method}.tsv"
        wildcard_constraints:
            method=pattern,
        params:
            sets=list(STUDY.sets),
            pairs=lambda wc: STUDY.method_pairs(wc.method),
            paths=lambda wc: similarity_files(wc.method, STUDY.method_pairs(wc.method)),
            spec=lambda wc: similarity_spec(wc.method),
        script:
            "../../scripts/similarity.py"


for suffix, pattern, pairs in pair_variants(rule_methods("similarity_tfidf")):

    share_cluster_settings("similarity_tfidf", suffix)

    rule:
        name:
            f"similarity_tfidf{suffix}"
        input:
            themes=lambda wc: method_themes(wc.method),
            code=code("similarity.py"),
        output:
            manifest="results/similarity/{method}/manifest.csv",
            pairs=expand(
                "results/similarity/{{method}}/{pair}.parquet",
                pair=rule_pairs(
                    "similarity_tfidf", pairs + within_of(sets_of(pairs)), pairs
                ),
            ),
        log:
            "logs/similarity/{method}.log",
        benchmark:
            "benchmarks/similarity/{method}.tsv"
        wildcard_constraints:
            method=pattern,
        params:
            sets=lambda wc: STUDY.sets_for(wc.method),
            pairs=lambda wc: STUDY.method_pairs(wc.method),
            paths=lambda wc: similarity_files(wc.method, STUDY.method_pairs(wc.method)),
            spec=lambda wc: similarity_spec(wc.method),
        script:
            "../../scripts/similarity.py"


for suffix, pattern, pairs in pair_variants(rule_methods("similarity_precomputed")):

    share_cluster_settings("similarity_precomputed", suffix)

    rule:
        name:
            f"similarity_precomputed{suffix}"
        input:
            themes=lambda wc: method_themes(wc.method),
            matrices=lambda wc: matrix_files(wc.method, STUDY.pairs_for(wc.method)),
            code=code("similarity.py"),
        output:
            manifest="results/similarity/{method}/manifest.csv",
            pairs=expand(
                "results/similarity/{{method}}/{pair}.parquet",
                pair=rule_pairs("similarity_precomputed", pairs, pairs),
            ),
        log:
            "logs/similarity/{method}.log",
        wildcard_constraints:
            method=pattern,
        params:
            sets=lambda wc: STUDY.sets_for(wc.method),
            pairs=lambda wc: STUDY.method_pairs(wc.method),
            paths=lambda wc: similarity_files(wc.method, STUDY.method_pairs(wc.method)),
            spec=lambda wc: similarity_spec(wc.method),
        script:
            "../../scripts/similarity.py"


for suffix, pattern, pairs in pair_variants(rule_methods("similarity_abtt")):

    share_cluster_settings("similarity_abtt", suffix)

    rule:
        name:
            f"similarity_abtt{suffix}"
        input:
            themes=theme_parquets(),
            embeddings=lambda wc: theme_map_embeddings(wc.method),
            code=code("similarity.py"),
        output:
            manifest="results/similarity/{method}/manifest.csv",
            pairs=expand(
                "results/similarity/{{method}}/{pair}.parquet",
                pair=rule_pairs(
                    "similarity_abtt", pairs + within_of(sets_of(pairs)), pairs
                ),
            ),
        log:
            "logs/similarity/{method}.log",
        benchmark:
            "benchmarks/similarity/{method}.tsv"
        wildcard_constraints:
            method=pattern,
        params:
            sets=list(STUDY.sets),
            pairs=lambda wc: STUDY.method_pairs(wc.method),
            paths=lambda wc: similarity_files(wc.method, STUDY.method_pairs(wc.method)),
            spec=lambda wc: similarity_spec(wc.method),
        script:
            "../../scripts/similarity.py"


for suffix, pattern, pairs in pair_variants(rule_methods("similarity_judge")):

    share_cluster_settings("similarity_judge", suffix)

    rule:
        name:
            f"similarity_judge{suffix}"
        input:
            themes=lambda wc: method_themes(wc.method),
            rated=lambda wc: judged_rated_pairs(wc.method),
            code=code("similarity.py"),
        output:
            manifest="results/similarity/{method}/manifest.csv",
            pairs=expand(
                "results/similarity/{{method}}/{pair}.parquet",
                pair=rule_pairs("similarity_judge", pairs, pairs),
            ),
        log:
            "logs/similarity/{method}.log",
        benchmark:
            "benchmarks/similarity/{method}.tsv"
        wildcard_constraints:
            method=pattern,
        priority: 1
        threads: 2
        resources:
            mem_mb=4000,
            llm_server=lambda wc: llm_server_of(wc.method),
        params:
            sets=lambda wc: STUDY.sets_for(wc.method),
            pairs=lambda wc: STUDY.method_pairs(wc.method),
            paths=lambda wc: similarity_files(wc.method, STUDY.method_pairs(wc.method)),
            spec=lambda wc: similarity_spec(wc.method),
            # An accumulating cache, not an output: a failed job must never delete it.
            cache=JUDGE_CACHE,
        script:
            "../../scripts/similarity.py"
