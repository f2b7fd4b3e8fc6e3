rule calibration:
    input:
        job_input(jobs.calibration),
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
        job=job_param(jobs.calibration),
    script:
        "../../scripts/calibration.py"
