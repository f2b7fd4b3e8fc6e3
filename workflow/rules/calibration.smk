rule calibration:
    input:
        pairs=lambda wc: calibration_settings()["pairs"],
        embeddings=lambda wc: calibration_embeddings(wc.method),
        embedded=lambda wc: calibration_after_embed(wc.method),
        judged=lambda wc: calibration_after_judge(wc.method),
        themes=lambda wc: calibration_themes(wc.method),
        matrices=lambda wc: calibration_matrices(wc.method),
        # the method's theme tables: which rated pairs are cells of its comparisons
        study_themes=lambda wc: [
            f"results/themes/{s}.parquet" for s in STUDY.sets_for(wc.method)
        ],
        code=code("calibration.py"),
    output:
        summary=report(
            "results/calibration/{method}.csv",
            caption="../report/calibration.rst",
            category="Calibration",
        ),
        fit="results/calibration/{method}/isotonic.csv",
        scores="results/calibration/{method}/scores.csv",
        crossfit="results/calibration/{method}/crossfit.csv",
        png=report(
            "results/calibration/{method}/calibration.png",
            caption="../report/calibration.rst",
            category="Calibration",
        ),
    log:
        "logs/calibration/{method}.log",
    benchmark:
        "benchmarks/calibration/{method}.tsv"
    wildcard_constraints:
        method=methods_with("calibrates"),
    # One thread: the embedding and judge jobs already scored the rated pairs, so this job
    # reads caches and fits; only pairs edited since then are encoded or judged here.
    threads: 1
    resources:
        mem_mb=lambda wc: calibration_mem_mb(wc.method),
        llm_server=lambda wc: llm_server_of(wc.method),
    params:
        kind=lambda wc: kind(wc.method),
        spec=lambda wc: calibration_spec(wc.method),
        positive_from=lambda wc: calibration_settings()["positive_from"],
        bootstrap=lambda wc: calibration_settings()["bootstrap"],
        cache=lambda wc: calibration_cache(wc.method),
        sets=lambda wc: calibration_sets(wc.method),
        matrix_pairs=lambda wc: calibration_matrix_pairs(wc.method),
        study_sets=lambda wc: STUDY.sets_for(wc.method),
        comparisons=lambda wc: STUDY.pairs_for(wc.method),
        prevalence=lambda wc: calibration_settings()["prevalence"],
    script:
        "../../scripts/calibration.py"
