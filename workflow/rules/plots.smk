rule plots:
    input:
        comparisons="results/metrics/{method}/comparisons.csv",
        sweep="results/metrics/{method}/sweep.csv",
        similarity=lambda wc: similarity_done(wc.method),
        themes=theme_parquets(),
        code=code("plots.py"),
    output:
        heatmaps=report(
            expand(
                "results/plots/{{method}}/{pair}_heatmap.png",
                pair=pair_names(STUDY.pairs),
            ),
            caption="../report/heatmap.rst",
            category="Heatmaps",
            subcategory="{method}",
        ),
        sweep=report(
            "results/plots/{method}/sweep.png",
            caption="../report/sweep.rst",
            category="Threshold sweeps",
        ),
    log:
        "logs/plots/{method}.log",
    benchmark:
        "benchmarks/plots/{method}.tsv"
    params:
        sets=list(STUDY.sets),
        pairs=STUDY.pairs,
        similarity_paths=lambda wc: similarity_files(wc.method),
        thresholds=lambda wc: STUDY.methods[wc.method]["thresholds"],
        op=lambda wc: method_op(wc.method),
    script:
        "../../scripts/plots.py"


rule methods_side_by_side:
    input:
        sweeps=expand("results/metrics/{method}/sweep.csv", method=STUDY.methods),
        code=code("plots.py"),
    output:
        report(
            "results/plots/methods_side_by_side.png",
            caption="../report/side_by_side.rst",
            category="Methods side by side",
        ),
    log:
        "logs/plots/methods_side_by_side.log",
    params:
        methods=list(STUDY.methods),
        thresholds={m: s["thresholds"] for m, s in STUDY.methods.items()},
    script:
        "../../scripts/side_by_side.py"
