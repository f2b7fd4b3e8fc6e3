# Agreement grounded in the transcripts (docs/grounding.md): per method, every set's labels on
# the transcript segments, then the grounded metrics and figures of every comparison.
# Thresholds come from the metrics job's thresholds.csv and `grounding:` settings are
# params, so changing them never re-embeds.


# One labels job per method writes the files of every set of its comparisons into one
# folder: a job per method and set cost an interpreter start each for a second of work.
rule segment_labels:
    input:
        job_input(jobs.segment_labels),
    output:
        labels=directory(paths.LABELS),
    log:
        "logs/grounding/{method}_labels.log",
    benchmark:
        "benchmarks/segment_labels/{method}.tsv"
    params:
        code=code("segment_labels.py"),
        job=job_param(jobs.segment_labels),
    script:
        "../../scripts/segment_labels.py"


# One job per method: its comparisons' long tables and figures fill a folder each.
rule grounding:
    input:
        job_input(jobs.grounding),
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
        job=job_param(jobs.grounding),
    script:
        "../../scripts/grounding.py"


# The LLM coder's scores (grounding.coder.kind: llm), one job for every LLM-coded set: its
# answers do not depend on the method, and are cached in results/cache/coder.sqlite.
if grounding.llm_coded_sets(SETUP):

    rule coder_llm:
        input:
            job_input(jobs.coder_llm),
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
            job=job_param(jobs.coder_llm),
        script:
            "../../scripts/coder_llm.py"


# How far the coder agrees with the human coding of every set that has one, per method.
if grounding.has_grounding(SETUP):

    rule coder_agreement:
        input:
            job_input(jobs.coder_agreement),
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
            job=job_param(jobs.coder_agreement),
        script:
            "../../scripts/coder_agreement.py"
