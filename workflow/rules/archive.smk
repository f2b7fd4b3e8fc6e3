# Not part of `all`: `snakemake --cores 4 archive` bundles a finished study for a paper.


rule archive:
    input:
        # A function: its thousands of per-pair files are listed only when archiving.
        results=lambda wc: archive_results(),
        theme_files=list(STUDY.sets.values()),
        transcripts=STUDY.transcripts,
        coded=list(coded_inputs().values()),
        precomputed=precomputed_files(),
        code=list(archive_code().values()),
    output:
        archive_zip(),
    log:
        "logs/archive/archive.log",
    params:
        config=lambda wc: config,
        study={"name": STUDY.name, "description": STUDY.description},
        sets=STUDY.sets,
        transcripts=STUDY.transcripts,
        coded=coded_inputs(),
        precomputed=precomputed_inputs(),
        judge_cache=judge_cache(),
        caches=generate_cache() + paraphrase_cache() + coder_cache(),
        code_names=list(archive_code()),
        code_version=CODE_VERSION,
        confidential=archive_settings()["confidential"],
        authors=archive_settings()["authors"],
    script:
        "../../scripts/archive.py"
