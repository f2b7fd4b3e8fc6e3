# Not part of `all`: `snakemake --cores 4 qdpx` writes, per method, the study's codings as a
# REFI-QDA project to open in QualCoder, ATLAS.ti, MAXQDA or NVivo: the transcripts, each
# human coder and the coder's application of each theme set as users, and where the users of
# one set's themes differ as codes under "Disagreements (themesim)".
from themesim.steps.qdpx import PROJECT as QDPX_PROJECT

if grounding.has_grounding(SETUP):

    rule qdpx_project:
        input:
            job_input(jobs.qdpx_project),
        output:
            project=QDPX_PROJECT,
        log:
            "logs/qdpx/{method}.log",
        params:
            code=code("qdpx.py"),
            job=job_param(jobs.qdpx_project),
        script:
            "../../scripts/qdpx.py"

    rule qdpx:
        input:
            [QDPX_PROJECT.format(method=m) for m in STUDY.methods],
