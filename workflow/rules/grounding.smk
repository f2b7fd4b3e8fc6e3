# Agreement grounded in the transcripts (docs/grounding.md): per method, every set's labels on
# the transcript segments, then the grounded metrics and figures of every comparison.
# Thresholds and `grounding:` settings are params, so changing them never re-embeds.


# A copy of each rule per group of methods restricted to the same `comparisons:`. One
# labels job per method writes every set's files: a job per method and set cost an interpreter
# start each for a second of work.
for suffix, pattern, pairs in pair_variants(STUDY.methods):

    share_cluster_settings("segment_labels", suffix)

    rule:
        name:
            f"segment_labels{suffix}"
        input:
            themes=lambda wc: method_themes(wc.method),
            segments="results/transcripts/segments.parquet",
            transcripts=STUDY.transcripts,
            coded=lambda wc: [STUDY.segments[s] for s in coded_sets(wc.method)],
            embeddings=lambda wc: embedding_files(wc.method, assigned_sets(wc.method)),
            segment_embeddings=lambda wc: (
                segment_embedding_files(wc.method) if assigned_sets(wc.method) else []
            ),
            code=code("segment_labels.py"),
        output:
            labels=expand(
                "results/segments/{{method}}/{set}.parquet", set=variant_sets(pairs)
            ),
            quotes=expand(
                "results/segments/{{method}}/{set}.quotes.csv", set=variant_sets(pairs)
            ),
        log:
            "logs/grounding/{method}_labels.log",
        benchmark:
            "benchmarks/segment_labels/{method}.tsv"
        wildcard_constraints:
            method=pattern,
        params:
            sets=lambda wc: STUDY.sets_for(wc.method),
            coded_sets=lambda wc: coded_sets(wc.method),
            assigned_sets=lambda wc: embedded_sets(wc.method, assigned_sets(wc.method)),
            spec=lambda wc: similarity_spec(wc.method),
            levels=lambda wc: {
                s: STUDY.levels.get(s, "all") for s in coded_sets(wc.method)
            },
            assign=STUDY.grounding.get("assign", "uncoded"),
            assign_threshold=lambda wc: (
                assign_threshold(wc.method) if assigned_sets(wc.method) else None
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
            # The figures too: a job of their own cost an interpreter start for a second.
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
