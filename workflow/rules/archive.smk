# Not part of `all`: `snakemake --cores 4 archive` bundles a finished study for a paper.
# Its inputs (thousands of per-pair files, the workflow's own files) are listed only when
# archiving.
rule archive:
    input:
        job_input(jobs.archive),
    output:
        zip=outputs.archive_zip(SETUP),
    log:
        "logs/archive/archive.log",
    params:
        code=code("archive.py"),
        job=job_param(jobs.archive),
    script:
        "../../scripts/archive.py"
