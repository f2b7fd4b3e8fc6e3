# Not part of `all`: `snakemake --cores 4 archive` bundles a finished study for a paper.
from themesim.archive.build import code_files

ARCHIVE_CODE = {name: str(p) for name, p in code_files(workflow.basedir).items()}


rule archive:
    input:
        # A function: its thousands of per-pair files are listed only when archiving.
        results=lambda wc: PLAN.archive_results(),
        theme_files=list(STUDY.sets.values()),
        transcripts=STUDY.transcripts,
        coded=list(summary.coded_inputs(SETUP).values()),
        precomputed=summary.precomputed_files(SETUP),
        # The workflow's own files by name, so the archive can be rerun.
        code=list(ARCHIVE_CODE.values()),
    output:
        PLAN.archive_zip(),
    log:
        "logs/archive/archive.log",
    params:
        config=lambda wc: config,
        study={"name": STUDY.name, "description": STUDY.description},
        sets=STUDY.sets,
        transcripts=STUDY.transcripts,
        coded=summary.coded_inputs(SETUP),
        precomputed=summary.precomputed_inputs(SETUP),
        judge_cache=PLAN.judge_cache(),
        caches=PLAN.archive_caches(),
        code_names=list(ARCHIVE_CODE),
        code_version=CODE_VERSION,
        confidential=PLAN.archive_settings()["confidential"],
        authors=PLAN.archive_settings()["authors"],
    script:
        "../../scripts/archive.py"
