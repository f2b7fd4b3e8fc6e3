# Not part of `all`: `snakemake --cores 4 archive` bundles a finished study for a paper.
from themesim.archive.build import code_files

ARCHIVE_CODE = {name: str(p) for name, p in code_files(workflow.basedir).items()}


rule archive:
    input:
        # A function: its thousands of per-pair files are listed only when archiving.
        results=lambda wc: outputs.archive_results(SETUP),
        theme_files=list(STUDY.sets.values()),
        transcripts=STUDY.transcripts,
        coded=list(summary.coded_inputs(SETUP).values()),
        precomputed=summary.precomputed_files(SETUP),
        # The workflow's own files by name, so the archive can be rerun.
        code=list(ARCHIVE_CODE.values()),
    output:
        outputs.archive_zip(SETUP),
    log:
        "logs/archive/archive.log",
    params:
        config=lambda wc: config,
        study={"name": STUDY.name, "description": STUDY.description},
        sets=STUDY.sets,
        transcripts=STUDY.transcripts,
        coded=summary.coded_inputs(SETUP),
        precomputed=summary.precomputed_inputs(SETUP),
        judge_cache=outputs.judge_cache(SETUP),
        caches=outputs.archive_caches(SETUP),
        code_names=list(ARCHIVE_CODE),
        code_version=CODE_VERSION,
        confidential=outputs.archive_settings(SETUP)["confidential"],
        authors=outputs.archive_settings(SETUP)["authors"],
    script:
        "../../scripts/archive.py"
