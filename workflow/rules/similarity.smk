# One job per method computes every pair, so the DAG grows with methods, not pairs: a job
# writes its folder of pair files (the comparisons its `comparisons:` give it, and the
# within-set matrices of a kind that has them), listed in the folder's manifest
# (themesim.io.manifest). What a job reads comes from the method's kind (themesim.inputs), and
# the step asks the kind how to score. A kind's jobs run under its `similarity_rule` (cluster
# profiles give the judge's jobs their own wall time): one rule per name, the others the
# embedding one under their own name, methods, threads and resources (methods.similarity_job),
# each defined when a method of the study runs under it.
rule similarity_embedding:
    input:
        job_input(jobs.similarity),
    output:
        manifest=paths.SIMILARITY_MANIFEST,
        pairs=directory(paths.SIMILARITY),
    log:
        "logs/similarity/{method}.log",
    benchmark:
        "benchmarks/similarity/{method}.tsv"
    wildcard_constraints:
        method=methods.similarity_methods(SETUP, "similarity_embedding"),
    priority: methods.similarity_job(SETUP, "similarity_embedding")["priority"]
    threads: methods.similarity_job(SETUP, "similarity_embedding")["threads"]
    resources:
        **methods.similarity_job(SETUP, "similarity_embedding")["resources"],
        llm_server=lambda wc: llm_server_of(wc.method),
    params:
        code=code("similarity.py"),
        job=job_param(jobs.similarity),
    script:
        "../../scripts/similarity.py"


if methods.rule_methods(SETUP, "similarity_tfidf"):

    use rule similarity_embedding as similarity_tfidf with:
        wildcard_constraints:
            method=methods.similarity_methods(SETUP, "similarity_tfidf"),
        priority: methods.similarity_job(SETUP, "similarity_tfidf")["priority"]
        threads: methods.similarity_job(SETUP, "similarity_tfidf")["threads"]
        resources:
            **methods.similarity_job(SETUP, "similarity_tfidf")["resources"],
            llm_server=lambda wc: llm_server_of(wc.method),


if methods.rule_methods(SETUP, "similarity_precomputed"):

    use rule similarity_embedding as similarity_precomputed with:
        wildcard_constraints:
            method=methods.similarity_methods(SETUP, "similarity_precomputed"),
        priority: methods.similarity_job(SETUP, "similarity_precomputed")["priority"]
        threads: methods.similarity_job(SETUP, "similarity_precomputed")["threads"]
        resources:
            **methods.similarity_job(SETUP, "similarity_precomputed")["resources"],
            llm_server=lambda wc: llm_server_of(wc.method),


if methods.rule_methods(SETUP, "similarity_abtt"):

    use rule similarity_embedding as similarity_abtt with:
        wildcard_constraints:
            method=methods.similarity_methods(SETUP, "similarity_abtt"),
        priority: methods.similarity_job(SETUP, "similarity_abtt")["priority"]
        threads: methods.similarity_job(SETUP, "similarity_abtt")["threads"]
        resources:
            **methods.similarity_job(SETUP, "similarity_abtt")["resources"],
            llm_server=lambda wc: llm_server_of(wc.method),


if methods.rule_methods(SETUP, "similarity_judge"):

    use rule similarity_embedding as similarity_judge with:
        wildcard_constraints:
            method=methods.similarity_methods(SETUP, "similarity_judge"),
        priority: methods.similarity_job(SETUP, "similarity_judge")["priority"]
        threads: methods.similarity_job(SETUP, "similarity_judge")["threads"]
        resources:
            **methods.similarity_job(SETUP, "similarity_judge")["resources"],
            llm_server=lambda wc: llm_server_of(wc.method),
