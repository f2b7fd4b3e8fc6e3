# Not part of `all`: `snakemake --cores 4 qdpx` writes, per method, the study's codings as a
# REFI-QDA project to open in QualCoder, ATLAS.ti, MAXQDA or NVivo (issue 34): the
# transcripts, each human coder and the coder's application of each theme set as users, and
# where the users of one set's themes differ as codes under "Disagreements (themesim)".
import re

from themesim.steps.qdpx import PROJECT as QDPX_PROJECT

if grounding.has_grounding(SETUP):

    rule qdpx_project:
        input:
            themes=lambda wc: embed.method_themes(SETUP, wc.method),
            labels=lambda wc: grounding.label_folder(SETUP, wc.method),
            segments=paths.SEGMENTS,
            transcripts=STUDY.transcripts,
            coded=lambda wc: [
                STUDY.segments[s] for s in grounding.coded_sets(SETUP, wc.method)
            ],
        output:
            QDPX_PROJECT,
        log:
            "logs/qdpx/{method}.log",
        wildcard_constraints:
            method="|".join(re.escape(m) for m in STUDY.methods),
        params:
            code=code("qdpx.py"),
            sets=lambda wc: STUDY.sets_for(wc.method),
            labels=lambda wc: grounding.label_files(SETUP, wc.method),
            coded_sets=lambda wc: grounding.coded_sets(SETUP, wc.method),
            coder_sets=lambda wc: grounding.coder_sets(SETUP, wc.method),
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
        script:
            "../../scripts/qdpx.py"

    rule qdpx:
        input:
            [QDPX_PROJECT.format(method=m) for m in STUDY.methods],
