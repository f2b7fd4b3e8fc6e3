# Every set is embedded (an abtt variant and the theme map read them all); the word-salad
# pools only for the B sets of the method's comparisons: a rule per group of methods
# restricted to the same `comparisons:` (themesim.plan.Plan.variants).
for v in PLAN.variants("embed", STUDY.methods_with("own_embeddings")):

    rule:
        name:
            v.rule
        input:
            themes=PLAN.themes(),
            segments=PLAN.segments(),
            pairs=lambda wc: ancient(PLAN.embedded_rated_pairs(wc.method)),
        output:
            embeddings=expand(paths.EMBEDDINGS, set=STUDY.sets, allow_missing=True),
            keywords=expand(paths.KEYWORDS, set=STUDY.sets, allow_missing=True),
            nulls=expand(
                paths.NULLS, set=PLAN.embedded_null_sets(v.pairs), allow_missing=True
            ),
            segments=PLAN.segment_outputs(),
        log:
            "logs/embed/{method}.log",
        benchmark:
            "benchmarks/embed/{method}.tsv"
        wildcard_constraints:
            method=v.pattern,
        priority: 1
        threads: cluster_threads(v, embed_threads())
        resources:
            **cluster_resources(
                v,
                mem_mb=lambda wc: embed_mem_mb(wc.method),
                gpu=lambda wc: method_gpus(wc.method),
            ),
        params:
            code=code("embed.py"),
            settings=lambda wc: PLAN.embed_settings(wc.method),
            cache=PLAN.embedding_cache(),
            sets=list(STUDY.sets),
            null_sets=lambda wc: PLAN.embedded_null_sets(STUDY.pairs_for(wc.method)),
            pool=STUDY.metrics["null_model"]["pool"],
            seed=STUDY.metrics["null_model"]["seed"],
            top_k=STUDY.metrics["quality"]["keywords_top_k"],
        script:
            "../../scripts/embed.py"
