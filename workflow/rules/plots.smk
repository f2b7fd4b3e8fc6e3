# One reference pair's heatmap: the rules that need them ask for a method's own pairs
# (plots.heatmaps), so a method restricted by `comparisons:` gets only those jobs.
rule heatmap:
    input:
        thresholds=paths.THRESHOLDS,
        similarity=lambda wc: similarity.done(SETUP, wc.method),
        themes=lambda wc: embed.themes(SETUP, plots.reference_pair(SETUP, wc.pair)),
        scale_fit=lambda wc: plots.scale_fit(SETUP, wc.method),
        # the pairs the within-set z rule drops are marked
        decisions=paths.DECISIONS,
    output:
        png=report(
            f"{paths.HEATMAP}.png",
            caption="../report/heatmap.rst",
            category="Heatmaps",
            subcategory="{method}",
        ),
        svg=f"{paths.HEATMAP}.svg",
    log:
        "logs/heatmap/{method}_{pair}.log",
    benchmark:
        "benchmarks/heatmap/{method}_{pair}.tsv"
    # A pair of the reference: a file in pair_heatmaps' folder beside it matches no job.
    wildcard_constraints:
        pair=plots.heatmap_pairs(SETUP),
    params:
        code=code("heatmap.py"),
        pair=lambda wc: plots.reference_pair(SETUP, wc.pair),
        similarity_path=lambda wc: similarity.files(
            SETUP, wc.method, [plots.reference_pair(SETUP, wc.pair)]
        )[0],
        scale=lambda wc: plots.scale_files(
            SETUP, wc.method, plots.reference_pair(SETUP, wc.pair)
        ),
    script:
        "../../scripts/heatmap.py"


# comparisons.all_pairs: the heatmaps of the pairs without the reference, in one folder
# (above plots.max_pair_heatmaps pairs: an overview of every set against every set instead).
rule pair_heatmaps:
    input:
        thresholds=paths.THRESHOLDS,
        comparisons=paths.COMPARISONS,
        similarity=lambda wc: similarity.done(SETUP, wc.method),
        themes=embed.themes(SETUP),
        scale_fit=lambda wc: plots.scale_fit(SETUP, wc.method),
        decisions=paths.DECISIONS,
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
        pairs=lambda wc: plots.other_pairs(SETUP, STUDY.pairs_for(wc.method)),
        similarity_paths=lambda wc: similarity.files(
            SETUP, wc.method, plots.other_pairs(SETUP, STUDY.pairs_for(wc.method))
        ),
        scale=lambda wc: plots.scale_files(SETUP, wc.method),
        max_heatmaps=plots.plot_limit(SETUP, "max_pair_heatmaps"),
    script:
        "../../scripts/pair_heatmaps.py"
