# The summary report of every result (outputs.results): its job waits for all of them.
rule summary_report:
    input:
        job_input(jobs.summary_report),
    output:
        html=report(
            paths.SUMMARY["html"],
            caption="../report/summary.rst",
            category="Summary",
        ),
        md=paths.SUMMARY["md"],
        pages=directory(outputs.REPORT_PAGES),
    log:
        "logs/report/summary.log",
    params:
        code=code("report.py"),
        job=job_param(jobs.summary_report),
    script:
        "../../scripts/report.py"


# The verdicts of every generator against the analysts (docs/verdicts.md): every method's
# whole similarity tables, read from both sides at one set size.
rule verdicts:
    input:
        job_input(jobs.verdicts),
    output:
        verdicts=report(
            paths.VERDICTS, caption="../report/verdicts.rst", category="Summary"
        ),
    log:
        "logs/report/verdicts.log",
    params:
        code=code("verdicts.py"),
        job=job_param(jobs.verdicts),
    script:
        "../../scripts/verdicts.py"


# One job for the report's tables and the figures that read only metric tables (headline,
# workbook, methods side by side, each method's figures of report/figures.py drawn here): one
# interpreter start and one import of pandas, matplotlib and openpyxl instead of one per figure.
rule report_parts:
    input:
        job_input(jobs.report_parts),
    output:
        *reported(plots.report_parts_outputs(SETUP)),
        workbook=paths.WORKBOOK,
    log:
        "logs/report/report_parts.log",
    benchmark:
        "benchmarks/report_parts/all.tsv"
    # Its figures and tables are drawn `threads` at a time (steps.runner.run_tasks). The
    # longest job at the end of the DAG: it starts before the plots jobs queued with it.
    priority: 1
    threads: report_threads()
    params:
        code=code("report_parts.py"),
        job=job_param(jobs.report_parts),
    script:
        "../../scripts/report_parts.py"
