# One job per method computes every pair, so the DAG grows with methods, not pairs: a job
# declares its manifest and the reference pairs' files; the other pairs of
# comparisons.all_pairs sit beside them, listed in the manifest (themesim.io.manifest).
# One rule for every kind: what a job reads comes from the method's kind (themesim.plan),
# and the step asks the kind how to score. The rule is named after the kind's
# `similarity_rule` (cluster profiles give the judge's jobs their own wall time), with a
# variant per group of methods restricted to the same `comparisons:`.
for v in PLAN.similarity_variants():
    job = PLAN.similarity_job(v)

    rule:
        name:
            v.rule
        input:
            themes=lambda wc: PLAN.themes(PLAN.similarity_sets(wc.method)),
            embeddings=lambda wc: PLAN.theme_map_embeddings(wc.method),
            matrices=lambda wc: PLAN.matrix_files(wc.method, STUDY.pairs_for(wc.method)),
            rated=lambda wc: ancient(PLAN.judged_rated_pairs(wc.method)),
        output:
            manifest=paths.SIMILARITY_MANIFEST,
            pairs=expand(
                paths.SIMILARITY_PAIR,
                pair=PLAN.similarity_pairs(v),
                allow_missing=True,
            ),
        log:
            "logs/similarity/{method}.log",
        benchmark:
            "benchmarks/similarity/{method}.tsv"
        wildcard_constraints:
            method=v.pattern,
        priority: job["priority"]
        threads: cluster_threads(v, job["threads"])
        resources:
            **cluster_resources(
                v,
                **job["resources"],
                llm_server=lambda wc: llm_server_of(wc.method),
            ),
        params:
            code=code("similarity.py"),
            sets=lambda wc: PLAN.similarity_sets(wc.method),
            pairs=lambda wc: STUDY.method_pairs(wc.method),
            paths=lambda wc: PLAN.similarity_files(
                wc.method, STUDY.method_pairs(wc.method)
            ),
            spec=lambda wc: PLAN.similarity_spec(wc.method),
            # An accumulating cache, not an output: a failed job must never delete it.
            cache=lambda wc: PLAN.similarity_cache(wc.method),
        script:
            "../../scripts/similarity.py"
