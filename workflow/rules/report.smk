rule summary_report:
    input:
        comparisons=expand(
            "results/metrics/{method}/comparisons.csv", method=STUDY.methods
        ),
        themes_tables=expand(
            "results/metrics/{method}/themes.csv", method=STUDY.methods
        ),
        sweeps=expand("results/metrics/{method}/sweep.csv", method=STUDY.methods),
        heatmaps=[h for m in STUDY.methods for h in heatmaps(m) + heatmap_folder(m)],
        sweep_plots=expand("results/plots/{method}/sweep.png", method=STUDY.methods),
        side_by_side="results/plots/methods_side_by_side.png",
        method_plots=[f for m in STUDY.methods for f in method_plot_files(m).values()],
        sets_tables=expand("results/metrics/{method}/sets.csv", method=STUDY.methods),
        decision_tables=expand(
            "results/metrics/{method}/decision_changes.csv", method=STUDY.methods
        ),
        runs_tables=[
            f"results/metrics/{m}/runs.csv" for m in STUDY.methods if has_runs(m)
        ],
        precomputed=precomputed_files(),
        headline=["results/report/headline.csv", "results/report/headline.tex"],
        verdicts=VERDICTS_CSV,
        intervals="results/report/headline_intervals.png",
        embeddings=[
            f"results/embeddings/{m}/{STUDY.reference}.parquet"
            for m in STUDY.methods_with("own_embeddings")
        ],
        segments="results/transcripts/segments.parquet",
        theme_files=list(STUDY.sets.values()),
        # The ingested tables, in STUDY.sets order: the inputs table counts their themes.
        theme_tables=theme_parquets(),
        transcripts=STUDY.transcripts,
        coded=list(coded_inputs().values()),
        grounding=[f for m in STUDY.methods for f in grounding_outputs(m)],
        code=code("report.py"),
    output:
        html=report(
            "results/report/summary.html",
            caption="../report/summary.rst",
            category="Summary",
        ),
        md="results/report/summary.md",
    log:
        "logs/report/summary.log",
    params:
        study={
            "name": STUDY.name,
            "description": STUDY.description,
            "reference": STUDY.reference,
        },
        methods={
            m: {
                "description": s.get("description", m),
                "thresholds": s["thresholds"],
                "op": method_op(m),
                "kind": kind(m),
                "scale": s.get("scale", "cosine"),
                "clamp": bool(s.get("clamp", False)),
                "reference": STUDY.reference,
                "max_pair_panels": max_pair_panels(),
            }
            for m, s in STUDY.methods.items()
        },
        pairs=pair_names(STUDY.pairs),
        method_pairs={m: pair_names(STUDY.pairs_for(m)) for m in STUDY.methods},
        heatmaps=[h for m in STUDY.methods for h in heatmap_paths(m)],
        sets=STUDY.sets,
        coded=coded_inputs(),
        config=lambda wc: config,
        code_version=CODE_VERSION,
        method_files={
            m: method_plot_files(m)
            | {"sets_csv": f"results/metrics/{m}/sets.csv"}
            | {"decisions_csv": f"results/metrics/{m}/decision_changes.csv"}
            | ({"runs_csv": f"results/metrics/{m}/runs.csv"} if has_runs(m) else {})
            | grounding_report_files(m)
            | pairs_overview_files(m)
            for m in STUDY.methods
        },
        headline={
            "headline_csv": "results/report/headline.csv",
            "headline_tex": "results/report/headline.tex",
            "verdicts_csv": VERDICTS_CSV,
        },
        confidential=archive_settings()["confidential"],
    script:
        "../../scripts/report.py"


# One job for the report's tables and the figures that read only metric tables (headline,
# workbook, methods side by side, each method's distributions and theme map): one interpreter
# start and one import of pandas, matplotlib and openpyxl instead of one per figure.
rule report_parts:
    input:
        comparisons=expand(
            "results/metrics/{method}/comparisons.csv", method=STUDY.methods
        ),
        sweeps=expand("results/metrics/{method}/sweep.csv", method=STUDY.methods),
        themes_tables=expand(
            "results/metrics/{method}/themes.csv", method=STUDY.methods
        ),
        # The workbook's first sheets, headline.csv and verdicts.csv, are written by this job.
        tables=[
            t
            for t in workbook_tables().values()
            if t not in (HEADLINE_CSV, VERDICTS_CSV)
        ],
        themes=theme_parquets(),
        embeddings=sorted(
            {f for m in theme_map_methods() for f in theme_map_embeddings(m)}
        ),
        code=code("report_parts.py"),
    output:
        *report_parts_outputs(),
        verdicts=report(
            VERDICTS_CSV, caption="../report/verdicts.rst", category="Summary"
        ),
        workbook=WORKBOOK,
    log:
        "logs/report/report_parts.log",
    benchmark:
        "benchmarks/report_parts/all.tsv"
    # Its figures and tables are drawn `threads` at a time (steps.runner.run_all). The
    # longest job at the end of the DAG: it starts before the plots jobs queued with it.
    priority: 1
    threads: report_threads()
    params:
        methods=list(STUDY.methods),
        ran_on={m: [len(p), len(STUDY.pairs)] for m, p in STUDY.restricted.items()},
        thresholds={m: s["thresholds"] for m, s in STUDY.methods.items()},
        headline=HEADLINE_FILES,
        tables=workbook_tables(),
        side_by_side=SIDE_BY_SIDE_FILES,
        figures={m: method_figure_files(m) for m in STUDY.methods},
        op={m: method_op(m) for m in STUDY.methods},
        gamma={m: family_settings(m)["gamma"] for m in STUDY.methods},
        sets=list(STUDY.sets),
        theme_maps={
            m: {
                "kind": kind(m),
                "d": STUDY.methods[m].get("d"),
                "embeddings": theme_map_embeddings(m),
            }
            for m in theme_map_methods()
        },
        reference=STUDY.reference,
        max_panels=max_pair_panels(),
        reference_group=STUDY.reference_group,
        equivalence=STUDY.equivalence,
    script:
        "../../scripts/report_parts.py"
