# One job per method; the transport plans of its comparisons (as many as the method's
# `comparisons:` give it) fill a folder, listed in the folder's manifest (themesim.io.manifest).
rule metrics:
    input:
        job_input(jobs.metrics),
    output:
        comparisons=report(
            paths.COMPARISONS,
            caption="../report/comparisons.rst",
            category="Metric tables",
            subcategory="{method}",
        ),
        themes=paths.THEME_TABLE,
        sweep=paths.SWEEP,
        transport=directory(paths.TRANSPORT),
        transport_manifest=paths.TRANSPORT_MANIFEST,
        splits=paths.SPLITS_JOINS,
        decisions=paths.DECISIONS,
        # thresholds and scale resolved once: plots, grounding and report read them here
        thresholds=paths.THRESHOLDS,
    log:
        "logs/metrics/{method}.log",
    benchmark:
        "benchmarks/metrics/{method}.tsv"
    params:
        code=code("metrics.py"),
        job=job_param(jobs.metrics),
    script:
        "../../scripts/metrics.py"


rule set_quality:
    input:
        job_input(jobs.set_quality),
    output:
        sets=report(
            paths.SETS,
            caption="../report/sets.rst",
            category="Metric tables",
            subcategory="{method}",
        ),
        themes=paths.SETS_THEMES,
    log:
        "logs/metrics/{method}_sets.log",
    benchmark:
        "benchmarks/set_quality/{method}.tsv"
    params:
        code=code("set_quality.py"),
        job=job_param(jobs.set_quality),
    script:
        "../../scripts/set_quality.py"


rule runs:
    input:
        job_input(jobs.runs),
    output:
        table=report(
            paths.RUNS,
            caption="../report/runs.rst",
            category="Metric tables",
            subcategory="{method}",
        ),
        matrix=paths.RUNS_MATRIX,
        # The figure too: a job of its own cost an interpreter start for a second of work.
        png=report(
            f"{paths.RUNS_PLOT}.png",
            caption="../report/run_consistency.rst",
            category="Run consistency",
            subcategory="{method}",
        ),
        svg=f"{paths.RUNS_PLOT}.svg",
    log:
        "logs/metrics/{method}_runs.log",
    benchmark:
        "benchmarks/runs/{method}.tsv"
    wildcard_constraints:
        method=methods.methods_with(SETUP, "runs"),
    params:
        code=code("runs.py"),
        job=job_param(jobs.runs),
    script:
        "../../scripts/runs.py"
