rule calibration:
    input:
        pairs=lambda wc: calibration.settings(SETUP)["pairs"],
        embeddings=lambda wc: calibration.embeddings(SETUP, wc.method),
        embedded=lambda wc: calibration.after_embed(SETUP, wc.method),
        judged=lambda wc: calibration.after_judge(SETUP, wc.method),
        themes=lambda wc: embed.themes(SETUP, calibration.sets(SETUP, wc.method)),
        matrices=lambda wc: similarity.matrix_files(
            SETUP, wc.method, calibration.matrix_pairs(SETUP, wc.method)
        ),
        # the method's theme tables: which rated pairs are cells of its comparisons
        study_themes=lambda wc: embed.method_themes(SETUP, wc.method),
    output:
        summary=report(
            paths.CALIBRATION_TABLE,
            caption="../report/calibration.rst",
            category="Calibration",
        ),
        fit=paths.ISOTONIC,
        scores=paths.CALIBRATION_SCORES,
        crossfit=paths.CROSSFIT,
        png=report(
            f"{paths.CALIBRATION_PLOT}.png",
            caption="../report/calibration.rst",
            category="Calibration",
        ),
    log:
        "logs/calibration/{method}.log",
    benchmark:
        "benchmarks/calibration/{method}.tsv"
    wildcard_constraints:
        method=methods.methods_with(SETUP, "calibrates"),
    # One thread: the embedding and judge jobs already scored the rated pairs, so this job
    # reads caches and fits; only pairs edited since then are encoded or judged here.
    threads: 1
    resources:
        mem_mb=lambda wc: calibration_mem_mb(wc.method),
        llm_server=lambda wc: llm_server_of(wc.method),
    params:
        code=code("calibration.py"),
        kind=lambda wc: methods.kind(SETUP, wc.method),
        spec=lambda wc: calibration.spec(SETUP, wc.method),
        positive_from=lambda wc: calibration.settings(SETUP)["positive_from"],
        bootstrap=lambda wc: calibration.settings(SETUP)["bootstrap"],
        cache=lambda wc: calibration.cache(SETUP, wc.method),
        sets=lambda wc: calibration.sets(SETUP, wc.method),
        matrix_pairs=lambda wc: calibration.matrix_pairs(SETUP, wc.method),
        study_sets=lambda wc: STUDY.sets_for(wc.method),
        comparisons=lambda wc: STUDY.pairs_for(wc.method),
        prevalence=lambda wc: calibration.settings(SETUP)["prevalence"],
    script:
        "../../scripts/calibration.py"
