# Every set is embedded (an abtt variant and the theme map read them all); the word-salad
# pools only for the B sets of the method's comparisons, in a folder of their own (as many
# as the method's `comparisons:` give it).
rule embed:
    input:
        job_input(jobs.embed),
    output:
        embeddings=expand(paths.EMBEDDINGS, set=STUDY.sets, allow_missing=True),
        keywords=expand(paths.KEYWORDS, set=STUDY.sets, allow_missing=True),
        nulls=directory(paths.NULLS_DIR),
        segments=embed.segment_outputs(SETUP),
    log:
        "logs/embed/{method}.log",
    benchmark:
        "benchmarks/embed/{method}.tsv"
    wildcard_constraints:
        method=methods.methods_with(SETUP, "own_embeddings"),
    priority: 1
    threads: embed_threads()
    resources:
        mem_mb=lambda wc: embed_mem_mb(wc.method),
        gpu=lambda wc: method_gpus(wc.method),
    params:
        code=code("embed.py"),
        job=job_param(jobs.embed),
    script:
        "../../scripts/embed.py"
