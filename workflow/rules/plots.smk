# A rule per group of methods restricted to the same `comparisons:` (Plan.variants).
for v in PLAN.variants("plots"):
    names = pair_names(PLAN.reference_pairs(v.pairs))

    rule:
        name:
            v.rule
        input:
            thresholds=paths.THRESHOLDS,
            sweep=paths.SWEEP,
            similarity=lambda wc: PLAN.similarity_done(wc.method),
            themes=PLAN.themes(),
            scale_fit=lambda wc: PLAN.scale_fit(wc.method),
        output:
            heatmaps=report(
                expand(f"{paths.HEATMAP}.png", pair=names, allow_missing=True),
                caption="../report/heatmap.rst",
                category="Heatmaps",
                subcategory="{method}",
            ),
            sweep=report(
                f"{paths.SWEEP_PLOT}.png",
                caption="../report/sweep.rst",
                category="Threshold sweeps",
            ),
            heatmaps_svg=expand(f"{paths.HEATMAP}.svg", pair=names, allow_missing=True),
            sweep_svg=f"{paths.SWEEP_PLOT}.svg",
        log:
            "logs/plots/{method}.log",
        benchmark:
            "benchmarks/plots/{method}.tsv"
        wildcard_constraints:
            method=v.pattern,
        threads: cluster_threads(v)
        resources:
            **cluster_resources(v),
        params:
            code=code("plots.py"),
            sets=list(STUDY.sets),
            pairs=lambda wc: PLAN.reference_pairs(STUDY.pairs_for(wc.method)),
            similarity_paths=lambda wc: PLAN.similarity_files(
                wc.method, PLAN.reference_pairs(STUDY.pairs_for(wc.method))
            ),
            op=lambda wc: PLAN.op(wc.method),
            scale=lambda wc: PLAN.scale_files(wc.method),
            reference=STUDY.reference,
            max_panels=PLAN.plot_limit("max_pair_panels"),
        script:
            "../../scripts/plots.py"


# comparisons.all_pairs: the heatmaps of the pairs without the reference, in one folder
# (above plots.max_pair_heatmaps pairs: an overview of every set against every set instead).
rule pair_heatmaps:
    input:
        thresholds=paths.THRESHOLDS,
        comparisons=paths.COMPARISONS,
        similarity=lambda wc: PLAN.similarity_done(wc.method),
        themes=PLAN.themes(),
        scale_fit=lambda wc: PLAN.scale_fit(wc.method),
    output:
        report(
            directory(paths.HEATMAPS),
            patterns=["{pair}_heatmap.png"],
            caption="../report/heatmap.rst",
            category="Heatmaps",
            subcategory="{method}",
        ),
    log:
        "logs/plots/{method}_heatmaps.log",
    benchmark:
        "benchmarks/plot_heatmaps/{method}.tsv"
    params:
        code=code("pair_heatmaps.py"),
        sets=list(STUDY.sets),
        pairs=lambda wc: PLAN.other_pairs(STUDY.pairs_for(wc.method)),
        similarity_paths=lambda wc: PLAN.similarity_files(
            wc.method, PLAN.other_pairs(STUDY.pairs_for(wc.method))
        ),
        op=lambda wc: PLAN.op(wc.method),
        scale=lambda wc: PLAN.scale_files(wc.method),
        max_heatmaps=PLAN.plot_limit("max_pair_heatmaps"),
    script:
        "../../scripts/pair_heatmaps.py"
