rule metrics:
    input:
        similarity=lambda wc: similarity_files(wc.method),
        themes=theme_parquets(),
        code=code("metrics.py", "pipeline.py"),
    output:
        comparisons=report(
            "results/metrics/{method}/comparisons.csv",
            caption="../report/comparisons.rst",
            category="Metric tables",
            subcategory="{method}",
        ),
        themes="results/metrics/{method}/themes.csv",
        sweep="results/metrics/{method}/sweep.csv",
    log:
        "logs/metrics/{method}.log",
    params:
        sets=list(STUDY.sets),
        pairs=STUDY.pairs,
        thresholds=lambda wc: STUDY.methods[wc.method]["thresholds"],
        op=lambda wc: method_op(wc.method),
        sweep=STUDY.sweep,
    script:
        "../../scripts/metrics.py"
