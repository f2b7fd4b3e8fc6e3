# Agreement grounded in the transcripts (docs/grounding.md): per method and set, the labels on
# transcript segments; per method, the grounded metrics of every comparison. Thresholds and
# `grounding:` settings are params, so changing them never re-embeds.


rule segment_labels:
    input:
        themes="results/themes/{set}.parquet",
        segments="results/transcripts/segments.parquet",
        transcripts=STUDY.transcripts,
        coded=lambda wc: [STUDY.segments[wc.set]] if wc.set in STUDY.segments else [],
        embeddings=lambda wc: (
            embedding_files(wc.method, [wc.set]) if assigns(wc.method, wc.set) else []
        ),
        segment_embeddings=lambda wc: (
            segment_embedding_files(wc.method) if assigns(wc.method, wc.set) else []
        ),
        code=code("segment_labels.py"),
    output:
        labels="results/segments/{method}/{set}.parquet",
        quotes="results/segments/{method}/{set}.quotes.csv",
    log:
        "logs/grounding/{method}/{set}.log",
    wildcard_constraints:
        method="|".join(re.escape(m) for m in STUDY.methods),
    params:
        spec=lambda wc: similarity_spec(wc.method),
        level=lambda wc: STUDY.levels.get(wc.set, "all"),
        assign=STUDY.grounding.get("assign", "uncoded"),
        assign_threshold=lambda wc: (
            assign_threshold(wc.method) if assigns(wc.method, wc.set) else None
        ),
        quote_cutoff=STUDY.grounding.get("quote_cutoff", 90.0),
        exclude_speakers=STUDY.grounding.get("exclude_speakers", ["Interviewer"]),
    script:
        "../../scripts/segment_labels.py"


# A copy of each rule per group of methods restricted to the same `comparisons:`.
for suffix, pattern, pairs in pair_variants(STUDY.methods):

    share_cluster_settings("grounding", suffix)

    rule:
        name:
            f"grounding{suffix}"
        input:
            similarity=lambda wc: similarity_done(wc.method),
            themes=lambda wc: method_themes(wc.method),
            labels=lambda wc: label_files(wc.method),
            quotes=lambda wc: quote_files(wc.method),
            segments="results/transcripts/segments.parquet",
            # A `calibrated` first threshold resolves from the calibration summary; scale:
            # calibrated maps S through the isotonic fit (within-set matrices of scale: z come
            # from the similarity job).
            calibration=lambda wc: calibration_files(wc.method),
            code=code("grounding.py"),
        output:
            table=report(
                "results/metrics/{method}/grounding.csv",
                caption="../report/grounding.rst",
                category="Metric tables",
                subcategory="{method}",
            ),
            pairs="results/metrics/{method}/grounding_pairs.csv",
            long=expand(
                "results/metrics/{{method}}/grounding/{pair}.parquet",
                pair=grounding_pairs(pairs),
            ),
        log:
            "logs/grounding/{method}.log",
        benchmark:
            "benchmarks/grounding/{method}.tsv"
        wildcard_constraints:
            method=pattern,
        params:
            sets=lambda wc: STUDY.sets_for(wc.method),
            pairs=lambda wc: STUDY.pairs_for(wc.method),
            similarity_paths=lambda wc: similarity_files(wc.method),
            threshold=lambda wc: STUDY.methods[wc.method]["thresholds"][0],
            op=lambda wc: method_op(wc.method),
            scale=lambda wc: heatmap_scale(wc.method),
            settings=grounding_settings(),
        script:
            "../../scripts/grounding.py"


for suffix, pattern, pairs in pair_variants(STUDY.methods):

    share_cluster_settings("grounding_plots", suffix)

    rule:
        name:
            f"grounding_plots{suffix}"
        input:
            table="results/metrics/{method}/grounding.csv",
            long=lambda wc: expand(
                "results/metrics/{method}/grounding/{pair}.parquet",
                method=wc.method,
                pair=grounding_pairs(STUDY.pairs_for(wc.method)),
            ),
            themes=lambda wc: method_themes(wc.method),
            code=code("grounding_plots.py"),
        output:
            heatmaps=report(
                expand(
                    "results/plots/{{method}}/grounding/{pair}_iou.png",
                    pair=grounding_pairs(pairs),
                ),
                caption="../report/grounding_iou.rst",
                category="Grounding",
                subcategory="{method}",
            ),
            heatmaps_svg=expand(
                "results/plots/{{method}}/grounding/{pair}_iou.svg",
                pair=grounding_pairs(pairs),
            ),
            scatter=report(
                "results/plots/{method}/grounding/text_vs_data.png",
                caption="../report/grounding_scatter.rst",
                category="Grounding",
                subcategory="{method}",
            ),
            scatter_svg="results/plots/{method}/grounding/text_vs_data.svg",
        log:
            "logs/grounding/{method}_plots.log",
        wildcard_constraints:
            method=pattern,
        params:
            sets=lambda wc: STUDY.sets_for(wc.method),
            pairs=lambda wc: STUDY.pairs_for(wc.method),
        script:
            "../../scripts/grounding_plots.py"
