# Agreement grounded in the transcripts (docs/grounding.md): per method, every set's labels on
# the transcript segments, then the grounded metrics and figures of every comparison.
# Thresholds come from the metrics job's thresholds.csv and `grounding:` settings are
# params, so changing them never re-embeds.


# One labels job per method writes the files of every set of its comparisons into one
# folder: a job per method and set cost an interpreter start each for a second of work.
rule segment_labels:
    input:
        themes=lambda wc: embed.method_themes(SETUP, wc.method),
        segments=paths.SEGMENTS,
        transcripts=STUDY.transcripts,
        coded=lambda wc: [
            STUDY.segments[s] for s in grounding.coded_sets(SETUP, wc.method)
        ],
        llm_scores=lambda wc: grounding.llm_score_files(
            SETUP, grounding.llm_coded_sets(SETUP, wc.method)
        ),
        embeddings=lambda wc: embed.files(
            SETUP, wc.method, grounding.assigned_sets(SETUP, wc.method)
        ),
        segment_embeddings=lambda wc: (
            embed.segment_embedding_files(SETUP, wc.method)
            if grounding.assigned_sets(SETUP, wc.method)
            else []
        ),
    output:
        labels=directory(paths.LABELS),
    log:
        "logs/grounding/{method}_labels.log",
    benchmark:
        "benchmarks/segment_labels/{method}.tsv"
    params:
        code=code("segment_labels.py"),
        sets=lambda wc: STUDY.sets_for(wc.method),
        labels=lambda wc: grounding.label_files(SETUP, wc.method),
        quotes=lambda wc: grounding.quote_files(SETUP, wc.method),
        coded_sets=lambda wc: grounding.coded_sets(SETUP, wc.method),
        assigned_sets=lambda wc: embed.embedded_sets(
            SETUP, wc.method, grounding.assigned_sets(SETUP, wc.method)
        ),
        spec=lambda wc: similarity.spec(SETUP, wc.method),
        levels=lambda wc: {
            s: STUDY.levels.get(s, "all")
            for s in grounding.coded_sets(SETUP, wc.method)
        },
        # a .qdpx set's user: only that user's codings are its coded segments
        users=lambda wc: {
            s: STUDY.users[s]
            for s in grounding.coded_sets(SETUP, wc.method)
            if s in STUDY.users
        },
        assign=STUDY.grounding["assign"],
        assign_threshold=lambda wc: (
            grounding.assign_threshold(SETUP, wc.method)
            if grounding.assigned_sets(SETUP, wc.method)
            else None
        ),
        quote_cutoff=STUDY.grounding["quote_cutoff"],
        exclude_speakers=STUDY.grounding["exclude_speakers"],
        coder=STUDY.grounding["coder"],
        coder_kinds=lambda wc: {
            s: grounding.coder_of(SETUP, wc.method, s)
            for s in STUDY.sets_for(wc.method)
        },
        llm_sets=lambda wc: grounding.llm_coded_sets(SETUP, wc.method),
    script:
        "../../scripts/segment_labels.py"


# One job per method: its comparisons' long tables and figures fill a folder each.
rule grounding:
    input:
        similarity=lambda wc: similarity.done(SETUP, wc.method),
        themes=lambda wc: embed.method_themes(SETUP, wc.method),
        labels=lambda wc: grounding.label_folder(SETUP, wc.method),
        segments=paths.SEGMENTS,
        # The first threshold and the scale as the metrics job resolved them (not
        # ancient: Snakemake then skips this job's own reasons whenever the metrics job
        # reruns, so a new first threshold would leave grounding stale); scale:
        # calibrated maps S through the isotonic fit (within-set matrices of scale: z come
        # from the similarity job).
        thresholds=paths.THRESHOLDS,
        scale_fit=lambda wc: plots.scale_fit(SETUP, wc.method),
        # agreement across codebooks: P(match) through the isotonic fit, where one exists
        codebook_fit=lambda wc: plots.codebook_fit(SETUP, wc.method),
    output:
        table=report(
            paths.GROUNDING,
            caption="../report/grounding.rst",
            category="Metric tables",
            subcategory="{method}",
        ),
        pairs=paths.GROUNDING_PAIRS,
        # the coder basis's counts per transcript: the verdicts' segments route
        pairs_by_transcript=paths.GROUNDING_TRANSCRIPTS,
        long=directory(paths.GROUNDING_LONG),
        # The figures too: a job of their own cost an interpreter start for a second.
        figures=report(
            directory(paths.GROUNDING_PLOTS),
            patterns=["{pair}_iou.png"],
            caption="../report/grounding_iou.rst",
            category="Grounding",
            subcategory="{method}",
        ),
        scatter=report(
            f"{paths.GROUNDING_SCATTER}.png",
            caption="../report/grounding_scatter.rst",
            category="Grounding",
            subcategory="{method}",
        ),
        scatter_svg=f"{paths.GROUNDING_SCATTER}.svg",
    log:
        "logs/grounding/{method}.log",
    benchmark:
        "benchmarks/grounding/{method}.tsv"
    params:
        code=code("grounding.py"),
        sets=lambda wc: STUDY.sets_for(wc.method),
        labels=lambda wc: grounding.label_files(SETUP, wc.method),
        quotes=lambda wc: grounding.quote_files(SETUP, wc.method),
        long=lambda wc: grounding.long_files(SETUP, wc.method),
        heatmaps=lambda wc: grounding.heatmaps(SETUP, wc.method),
        pairs=lambda wc: STUDY.pairs_for(wc.method),
        similarity_paths=lambda wc: similarity.files(SETUP, wc.method),
        scale=lambda wc: plots.scale_files(SETUP, wc.method),
        settings=grounding.settings(SETUP),
        bases=STUDY.grounding["basis"],
        coder_sets=lambda wc: grounding.coder_sets(SETUP, wc.method),
        assign=STUDY.grounding["assign"],
        coders=lambda wc: grounding.coder_descriptions(SETUP, wc.method),
        codebooks=lambda wc: plots.codebook_similarity(SETUP, wc.method),
    script:
        "../../scripts/grounding.py"


# The LLM coder's scores (grounding.coder.kind: llm), one job for every LLM-coded set: its
# answers do not depend on the method, and are cached in results/cache/coder.sqlite.
if grounding.llm_coded_sets(SETUP):

    rule coder_llm:
        input:
            themes=embed.themes(SETUP, grounding.llm_coded_sets(SETUP)),
            segments=paths.SEGMENTS,
        output:
            scores=grounding.llm_score_files(SETUP, grounding.llm_coded_sets(SETUP)),
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
            code=code("coder_llm.py"),
            sets=grounding.llm_coded_sets(SETUP),
            llm=STUDY.grounding["coder"]["llm"],
            exclude_speakers=STUDY.grounding["exclude_speakers"],
            cache=paths.CACHES["coder"],
        script:
            "../../scripts/coder_llm.py"


# How far the coder agrees with the human coding of every set that has one, per method.
if grounding.has_grounding(SETUP):

    rule coder_agreement:
        input:
            labels=[grounding.label_folder(SETUP, m) for m in STUDY.methods],
            themes=embed.themes(SETUP),
            segments=paths.SEGMENTS,
        output:
            table=report(
                paths.CODER_AGREEMENT,
                caption="../report/coder_agreement.rst",
                category="Metric tables",
                subcategory="grounding",
            ),
        log:
            "logs/grounding/coder_agreement.log",
        params:
            code=code("coder_agreement.py"),
            labels=[f for m in STUDY.methods for f in grounding.label_files(SETUP, m)],
            methods={
                m: {
                    "sets": STUDY.sets_for(m),
                    "coded_sets": grounding.coded_sets(SETUP, m),
                    "coders": grounding.coder_descriptions(SETUP, m),
                }
                for m in STUDY.methods
            },
            sets=list(STUDY.sets),
            exclude_speakers=STUDY.grounding["exclude_speakers"],
        script:
            "../../scripts/coder_agreement.py"
