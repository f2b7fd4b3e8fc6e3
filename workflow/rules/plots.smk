# A copy of the rule per group of methods restricted to the same `comparisons:`.
for suffix, pattern, pairs in pair_variants(STUDY.methods):

    share_cluster_settings("plots", suffix)

    rule:
        name:
            f"plots{suffix}"
        input:
            comparisons="results/metrics/{method}/comparisons.csv",
            sweep="results/metrics/{method}/sweep.csv",
            similarity=lambda wc: similarity_done(wc.method),
            themes=theme_parquets(),
            calibration=lambda wc: calibration_files(wc.method),
            code=code("plots.py"),
        output:
            heatmaps=report(
                expand(
                    "results/plots/{{method}}/{pair}_heatmap.png",
                    pair=pair_names(reference_pairs(pairs)),
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
            heatmaps_svg=expand(
                "results/plots/{{method}}/{pair}_heatmap.svg",
                pair=pair_names(reference_pairs(pairs)),
            ),
            sweep_svg="results/plots/{method}/sweep.svg",
        log:
            "logs/plots/{method}.log",
        benchmark:
            "benchmarks/plots/{method}.tsv"
        wildcard_constraints:
            method=pattern,
        params:
            sets=list(STUDY.sets),
            pairs=lambda wc: reference_pairs(STUDY.pairs_for(wc.method)),
            similarity_paths=lambda wc: similarity_files(
                wc.method, reference_pairs(STUDY.pairs_for(wc.method))
            ),
            thresholds=lambda wc: STUDY.methods[wc.method]["thresholds"],
            op=lambda wc: method_op(wc.method),
            scale=lambda wc: heatmap_scale(wc.method),
            reference=STUDY.reference,
            max_panels=max_pair_panels(),
        script:
            "../../scripts/plots.py"


# comparisons.all_pairs: the heatmaps of the pairs without the reference, in one folder
# (above plots.max_pair_heatmaps pairs: an overview of every set against every set instead).
rule pair_heatmaps:
    input:
        comparisons="results/metrics/{method}/comparisons.csv",
        similarity=lambda wc: similarity_done(wc.method),
        themes=theme_parquets(),
        calibration=lambda wc: calibration_files(wc.method),
        code=code("pair_heatmaps.py"),
    output:
        report(
            directory("results/plots/{method}/heatmaps"),
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
        sets=list(STUDY.sets),
        pairs=lambda wc: other_pairs(STUDY.pairs_for(wc.method)),
        similarity_paths=lambda wc: similarity_files(
            wc.method, other_pairs(STUDY.pairs_for(wc.method))
        ),
        thresholds=lambda wc: STUDY.methods[wc.method]["thresholds"],
        op=lambda wc: method_op(wc.method),
        scale=lambda wc: heatmap_scale(wc.method),
        max_heatmaps=max_pair_heatmaps(),
    script:
        "../../scripts/pair_heatmaps.py"
