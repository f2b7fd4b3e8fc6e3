rule summary_report:
    input:
        comparisons=summary.all_tables(SETUP, paths.COMPARISONS),
        thresholds=summary.all_tables(SETUP, paths.THRESHOLDS),
        themes_tables=summary.all_tables(SETUP, paths.THEME_TABLE),
        sweeps=summary.all_tables(SETUP, paths.SWEEP),
        heatmaps=[
            h
            for m in STUDY.methods
            for h in plots.heatmaps(SETUP, m) + plots.heatmap_folder(SETUP, m)
        ],
        side_by_side=paths.SIDE_BY_SIDE["png"],
        method_plots=[
            f
            for m in STUDY.methods
            for f in plots.method_plot_files(SETUP, m).values()
        ],
        sets_tables=summary.all_tables(SETUP, paths.SETS),
        decision_tables=summary.all_tables(SETUP, paths.DECISIONS),
        runs_tables=summary.runs_tables(SETUP),
        precomputed=summary.precomputed_files(SETUP),
        headline=[paths.HEADLINE["csv"], paths.HEADLINE["tex"]],
        verdicts=paths.VERDICTS,
        intervals=paths.HEADLINE["png"],
        embeddings=[
            embed.files(SETUP, m, [STUDY.reference])[0]
            for m in STUDY.methods_with("own_embeddings")
        ],
        segments=paths.SEGMENTS,
        theme_files=list(STUDY.sets.values()),
        # The ingested tables, in STUDY.sets order: the inputs table counts their themes.
        theme_tables=embed.themes(SETUP),
        transcripts=STUDY.transcripts,
        coded=list(summary.coded_inputs(SETUP).values()),
        grounding=[f for m in STUDY.methods for f in grounding.outputs(SETUP, m)],
        # an LLM judge's model and server build are read from its similarity files
        judges=[
            similarity.manifest(SETUP, m) for m in STUDY.methods_with("judge_cache")
        ],
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
        study={
            "name": STUDY.name,
            "description": STUDY.description,
            "reference": STUDY.reference,
        },
        methods=summary.report_methods(SETUP),
        pairs=pair_names(STUDY.pairs),
        method_pairs={m: pair_names(STUDY.pairs_for(m)) for m in STUDY.methods},
        heatmaps=[h for m in STUDY.methods for h in plots.heatmap_paths(SETUP, m)],
        sets=STUDY.sets,
        coded=summary.coded_inputs(SETUP),
        config=lambda wc: config,
        code_version=CODE_VERSION,
        method_files={m: summary.report_method_files(SETUP, m) for m in STUDY.methods},
        headline={
            "headline_csv": paths.HEADLINE["csv"],
            "headline_tex": paths.HEADLINE["tex"],
            "verdicts_csv": paths.VERDICTS,
        },
        confidential=outputs.archive_settings(SETUP)["confidential"],
        judge_methods=STUDY.methods_with("judge_cache"),
    script:
        "../../scripts/report.py"


# The verdicts of every generator against the analysts (docs/verdicts.md): every method's
# whole similarity tables, read from both sides at one set size.
rule verdicts:
    input:
        comparisons=summary.all_tables(SETUP, paths.COMPARISONS),
        thresholds=summary.all_tables(SETUP, paths.THRESHOLDS),
        themes_tables=summary.all_tables(SETUP, paths.THEME_TABLE),
        similarity=[similarity.manifest(SETUP, m) for m in STUDY.methods],
        themes=embed.themes(SETUP),
        grounding_pairs=[
            grounding.tables(SETUP, m)[1] for m in grounding.grounded_methods(SETUP)
        ],
        calibration_fits=[
            calibration.isotonic_fit(SETUP, m)
            for m in calibration.strength_fits(SETUP)
        ],
    output:
        verdicts=report(
            paths.VERDICTS, caption="../report/verdicts.rst", category="Summary"
        ),
    log:
        "logs/report/verdicts.log",
    params:
        code=code("verdicts.py"),
        methods=list(STUDY.methods),
        sets=list(STUDY.sets),
        reference=STUDY.reference,
        analysts=STUDY.analysts,
        generators=STUDY.generators,
        equivalence=STUDY.equivalence,
        primary=STUDY.verdict["primary"],
        preferred=STUDY.methods_with("own_embeddings"),
        grounded=grounding.grounded_methods(SETUP),
        calibrated=calibration.strength_fits(SETUP),
    script:
        "../../scripts/verdicts.py"


# One job for the report's tables and the figures that read only metric tables (headline,
# workbook, methods side by side, each method's figures of report/figures.py drawn here): one
# interpreter start and one import of pandas, matplotlib and openpyxl instead of one per figure.
rule report_parts:
    input:
        comparisons=summary.all_tables(SETUP, paths.COMPARISONS),
        thresholds=summary.all_tables(SETUP, paths.THRESHOLDS),
        sweeps=summary.all_tables(SETUP, paths.SWEEP),
        themes_tables=summary.all_tables(SETUP, paths.THEME_TABLE),
        # The workbook's first sheets, headline.csv and verdicts.csv, are written by this job.
        tables=[
            t
            for t in summary.workbook_tables(SETUP).values()
            if t != paths.HEADLINE["csv"]
        ],
        verdicts=paths.VERDICTS,
        themes=embed.themes(SETUP),
        # each method's segment agreement of theme pairs: the verdicts' segments route
        grounding_pairs=[
            grounding.tables(SETUP, m)[1] for m in grounding.grounded_methods(SETUP)
        ],
        grounding_transcripts=[
            grounding.transcripts(SETUP, m) for m in grounding.grounded_methods(SETUP)
        ],
        calibration_fits=[
            calibration.isotonic_fit(SETUP, m)
            for m in calibration.strength_fits(SETUP)
        ],
        embeddings=sorted(
            {
                f
                for m in plots.theme_map_methods(SETUP)
                for f in embed.theme_map_embeddings(SETUP, m)
            }
        ),
    output:
        *reported(plots.report_parts_outputs(SETUP)),
        workbook=paths.WORKBOOK,
    log:
        "logs/report/report_parts.log",
    benchmark:
        "benchmarks/report_parts/all.tsv"
    # Its figures and tables are drawn `threads` at a time (steps.runner.run_all). The
    # longest job at the end of the DAG: it starts before the plots jobs queued with it.
    priority: 1
    threads: report_threads()
    params:
        code=code("report_parts.py"),
        methods=list(STUDY.methods),
        ran_on={m: [len(p), len(STUDY.pairs)] for m, p in STUDY.restricted.items()},
        headline=paths.HEADLINE,
        tables=summary.workbook_tables(SETUP),
        # named in the workbook's index, not held: parquet matrices and their folders
        named=summary.workbook_named(SETUP),
        side_by_side=paths.SIDE_BY_SIDE,
        figures={m: plots.method_figure_files(SETUP, m) for m in STUDY.methods},
        gamma={m: metrics.family_settings(SETUP, m)["gamma"] for m in STUDY.methods},
        sets=list(STUDY.sets),
        # each method with theme vectors (the theme map): what gives them
        vectors={
            m: {
                "kind": methods.kind(SETUP, m),
                "d": STUDY.methods[m].get("d"),
                "embeddings": embed.theme_map_embeddings(SETUP, m),
            }
            for m in plots.theme_map_methods(SETUP)
        },
        reference=STUDY.reference,
        max_panels=plots.plot_limit(SETUP, "max_pair_panels"),
        reference_group=STUDY.reference_group,
        equivalence=STUDY.equivalence,
        generators=STUDY.generators,
        grounded=grounding.grounded_methods(SETUP),
        calibrated=calibration.strength_fits(SETUP),
    script:
        "../../scripts/report_parts.py"
