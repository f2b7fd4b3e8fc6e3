rule ingest_themes:
    input:
        job_input(jobs.ingest_themes),
    output:
        table=paths.THEMES,
    log:
        "logs/ingest/themes_{set}.log",
    params:
        code=code("ingest_themes.py"),
        job=job_param(jobs.ingest_themes),
    script:
        "../../scripts/ingest_themes.py"


if STUDY.transcript_projects:

    rule qdpx_transcripts:
        input:
            job_input(jobs.qdpx_transcripts),
        output:
            transcripts=STUDY.transcripts,
        log:
            "logs/ingest/qdpx_transcripts.log",
        params:
            code=code("qdpx_transcripts.py"),
            job=job_param(jobs.qdpx_transcripts),
        script:
            "../../scripts/qdpx_transcripts.py"


rule ingest_transcripts:
    input:
        job_input(jobs.ingest_transcripts),
    output:
        segments=paths.SEGMENTS,
    log:
        "logs/ingest/transcripts.log",
    params:
        code=code("ingest_transcripts.py"),
        job=job_param(jobs.ingest_transcripts),
    script:
        "../../scripts/ingest_transcripts.py"
