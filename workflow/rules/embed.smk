# Every set is embedded (an abtt variant and the theme map read them all); the word-salad
# pools only for the B sets of the method's comparisons: a copy of the rule per group of
# methods restricted to the same `comparisons:`.
for suffix, pattern, pairs in pair_variants(STUDY.methods_with("own_embeddings")):

    share_cluster_settings("embed", suffix)

    rule:
        name:
            f"embed{suffix}"
        input:
            themes=theme_parquets(),
            segments=segment_parquets(),
            pairs=lambda wc: embedded_rated_pairs(wc.method),
            code=code("embed.py"),
        output:
            embeddings=expand(
                "results/embeddings/{{method}}/{set}.parquet", set=STUDY.sets
            ),
            keywords=expand(
                "results/keyword_embeddings/{{method}}/{set}.parquet", set=STUDY.sets
            ),
            nulls=expand(
                "results/nulls/{{method}}/{set}.parquet", set=embedded_null_sets(pairs)
            ),
            segments=segment_outputs(),
        log:
            "logs/embed/{method}.log",
        benchmark:
            "benchmarks/embed/{method}.tsv"
        wildcard_constraints:
            method=pattern,
        priority: 1
        threads: embed_threads()
        resources:
            mem_mb=lambda wc: embed_mem_mb(wc.method),
            gpu=lambda wc: method_gpus(wc.method),
        params:
            settings=lambda wc: embed_settings(wc.method),
            cache=embedding_cache(),
            sets=list(STUDY.sets),
            null_sets=lambda wc: embedded_null_sets(STUDY.pairs_for(wc.method)),
            pool=STUDY.metrics["null_model"]["pool"],
            seed=STUDY.metrics["null_model"]["seed"],
            top_k=STUDY.metrics["quality"]["keywords_top_k"],
        script:
            "../../scripts/embed.py"
