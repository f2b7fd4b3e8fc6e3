rule ingest_themes:
    input:
        src=lambda wc: STUDY.sets[wc.set],
    output:
        paths.THEMES,
    log:
        "logs/ingest/themes_{set}.log",
    params:
        code=code("ingest_themes.py"),
        template=lambda wc: STUDY.template,
        level=lambda wc: STUDY.levels.get(wc.set, "all"),
        # A method writes this set's within-set matrix: its size is checked here, first.
        within=lambda wc: any(
            wc.set in STUDY.sets_for(m)
            for m in STUDY.methods_with("within_set_matrices")
        ),
    script:
        "../../scripts/ingest_themes.py"


if STUDY.transcript_projects:

    rule qdpx_transcripts:
        input:
            projects=STUDY.transcript_projects,
        output:
            STUDY.transcripts,
        log:
            "logs/ingest/qdpx_transcripts.log",
        params:
            code=code("qdpx_transcripts.py"),
        script:
            "../../scripts/qdpx_transcripts.py"


rule ingest_transcripts:
    input:
        transcripts=STUDY.transcripts,
    output:
        paths.SEGMENTS,
    log:
        "logs/ingest/transcripts.log",
    params:
        code=code("ingest_transcripts.py"),
    script:
        "../../scripts/ingest_transcripts.py"
