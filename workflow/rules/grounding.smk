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
            llm_scores=lambda wc: [llm_score_file(s) for s in llm_coded_sets(wc.method)],
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
            coder=STUDY.grounding["coder"],
            coder_kinds=lambda wc: {
                s: set_coder(STUDY.grounding["coder"], wc.method, s)
                for s in STUDY.sets_for(wc.method)
            },
            llm_sets=lambda wc: llm_coded_sets(wc.method),
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
            bases=STUDY.grounding["basis"],
            coder_sets=lambda wc: coder_sets(wc.method),
            assign=STUDY.grounding["assign"],
            coders=lambda wc: coder_descriptions(wc.method),
        script:
            "../../scripts/grounding.py"


# The LLM coder's scores (grounding.coder.kind: llm), one job for every LLM-coded set: its
# answers do not depend on the method, and are cached in results/cache/coder.sqlite.
if llm_coded_sets():

    rule coder_llm:
        input:
            themes=[f"results/themes/{s}.parquet" for s in llm_coded_sets()],
            segments="results/transcripts/segments.parquet",
            code=code("coder_llm.py"),
        output:
            scores=[llm_score_file(s) for s in llm_coded_sets()],
        log:
            "logs/grounding/coder_llm.log",
        benchmark:
            "benchmarks/coder_llm/all.tsv"
        priority: 1
        threads: workflow.cores
        resources:
            mem_mb=4000,
            llm_server=llm_server_for(STUDY.grounding["coder"]["llm"]),
        params:
            sets=llm_coded_sets(),
            llm=STUDY.grounding["coder"]["llm"],
            exclude_speakers=STUDY.grounding.get("exclude_speakers", ["Interviewer"]),
            cache="results/cache/coder.sqlite",
        script:
            "../../scripts/coder_llm.py"


# How far the coder agrees with the human coding of every set that has one, per method.
if has_grounding():

    rule coder_agreement:
        input:
            labels=[f for m in STUDY.methods for f in label_files(m)],
            themes=theme_parquets(),
            segments="results/transcripts/segments.parquet",
            code=code("coder_agreement.py"),
        output:
            table=report(
                CODER_AGREEMENT,
                caption="../report/coder_agreement.rst",
                category="Metric tables",
                subcategory="grounding",
            ),
        log:
            "logs/grounding/coder_agreement.log",
        params:
            methods={
                m: {
                    "sets": STUDY.sets_for(m),
                    "coded_sets": coded_sets(m),
                    "coders": coder_descriptions(m),
                }
                for m in STUDY.methods
            },
            sets=list(STUDY.sets),
            exclude_speakers=STUDY.grounding.get("exclude_speakers", ["Interviewer"]),
        script:
            "../../scripts/coder_agreement.py"
