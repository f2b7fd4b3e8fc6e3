# Every set is embedded (an abtt variant and the theme map read them all); the word-salad
# pools only for the B sets of the method's comparisons, in a folder of their own (as many
# as the method's `comparisons:` give it).
rule embed:
    input:
        themes=embed.themes(SETUP),
        segments=embed.segments(SETUP),
        pairs=lambda wc: ancient(calibration.embedded_rated_pairs(SETUP, wc.method)),
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
        settings=lambda wc: embed.settings(SETUP, wc.method),
        cache=embed.cache(SETUP),
        sets=list(STUDY.sets),
        null_sets=lambda wc: embed.embedded_null_sets(SETUP, STUDY.pairs_for(wc.method)),
        null_paths=lambda wc: embed.embedded_null_files(SETUP, wc.method),
        pool=STUDY.metrics["null_model"]["pool"],
        seed=STUDY.metrics["null_model"]["seed"],
        top_k=STUDY.metrics["quality"]["keywords_top_k"],
    script:
        "../../scripts/embed.py"
