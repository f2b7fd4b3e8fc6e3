# One job per method computes every pair, so the DAG grows with methods, not pairs: a job
# writes its folder of pair files (the comparisons its `comparisons:` give it, and the
# within-set matrices of a kind that has them), listed in the folder's manifest
# (themesim.io.manifest). What a job reads comes from the method's kind (themesim.plan), and
# the step asks the kind how to score. A kind's jobs run under its `similarity_rule` (cluster
# profiles give the judge's jobs their own wall time): one rule per name, the others the
# embedding one under their own name, methods, threads and resources (PLAN.similarity_job).
rule similarity_embedding:
    input:
        themes=lambda wc: PLAN.themes(PLAN.similarity_sets(wc.method)),
        embeddings=lambda wc: PLAN.theme_map_embeddings(wc.method),
        matrices=lambda wc: PLAN.matrix_files(wc.method, STUDY.pairs_for(wc.method)),
        rated=lambda wc: ancient(PLAN.judged_rated_pairs(wc.method)),
    output:
        manifest=paths.SIMILARITY_MANIFEST,
        pairs=directory(paths.SIMILARITY),
    log:
        "logs/similarity/{method}.log",
    benchmark:
        "benchmarks/similarity/{method}.tsv"
    wildcard_constraints:
        method=PLAN.similarity_methods("similarity_embedding"),
    priority: PLAN.similarity_job("similarity_embedding")["priority"]
    threads: PLAN.similarity_job("similarity_embedding")["threads"]
    resources:
        **PLAN.similarity_job("similarity_embedding")["resources"],
        llm_server=lambda wc: llm_server_of(wc.method),
    params:
        code=code("similarity.py"),
        sets=lambda wc: PLAN.similarity_sets(wc.method),
        pairs=lambda wc: STUDY.method_pairs(wc.method),
        paths=lambda wc: PLAN.similarity_files(wc.method, STUDY.method_pairs(wc.method)),
        spec=lambda wc: PLAN.similarity_spec(wc.method),
        # An accumulating cache, not an output: a failed job must never delete it.
        cache=lambda wc: PLAN.similarity_cache(wc.method),
    script:
        "../../scripts/similarity.py"


use rule similarity_embedding as similarity_tfidf with:
    wildcard_constraints:
        method=PLAN.similarity_methods("similarity_tfidf"),
    priority: PLAN.similarity_job("similarity_tfidf")["priority"]
    threads: PLAN.similarity_job("similarity_tfidf")["threads"]
    resources:
        **PLAN.similarity_job("similarity_tfidf")["resources"],
        llm_server=lambda wc: llm_server_of(wc.method),


use rule similarity_embedding as similarity_precomputed with:
    wildcard_constraints:
        method=PLAN.similarity_methods("similarity_precomputed"),
    priority: PLAN.similarity_job("similarity_precomputed")["priority"]
    threads: PLAN.similarity_job("similarity_precomputed")["threads"]
    resources:
        **PLAN.similarity_job("similarity_precomputed")["resources"],
        llm_server=lambda wc: llm_server_of(wc.method),


use rule similarity_embedding as similarity_abtt with:
    wildcard_constraints:
        method=PLAN.similarity_methods("similarity_abtt"),
    priority: PLAN.similarity_job("similarity_abtt")["priority"]
    threads: PLAN.similarity_job("similarity_abtt")["threads"]
    resources:
        **PLAN.similarity_job("similarity_abtt")["resources"],
        llm_server=lambda wc: llm_server_of(wc.method),


use rule similarity_embedding as similarity_judge with:
    wildcard_constraints:
        method=PLAN.similarity_methods("similarity_judge"),
    priority: PLAN.similarity_job("similarity_judge")["priority"]
    threads: PLAN.similarity_job("similarity_judge")["threads"]
    resources:
        **PLAN.similarity_job("similarity_judge")["resources"],
        llm_server=lambda wc: llm_server_of(wc.method),
