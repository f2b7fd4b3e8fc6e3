# One reference pair's heatmap: the rules that need them ask for a method's own pairs
# (plots.heatmaps), so a method restricted by `comparisons:` gets only those jobs.
rule heatmap:
    input:
        job_input(jobs.heatmap),
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
        job=job_param(jobs.heatmap),
    script:
        "../../scripts/heatmap.py"


# comparisons.all_pairs: the heatmaps of the pairs without the reference, in one folder
# (above plots.max_pair_heatmaps pairs: an overview of every set against every set instead).
rule pair_heatmaps:
    input:
        job_input(jobs.pair_heatmaps),
    output:
        heatmaps=report(
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
        job=job_param(jobs.pair_heatmaps),
    script:
        "../../scripts/pair_heatmaps.py"
