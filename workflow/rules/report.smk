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
        intervals="results/report/headline_intervals.png",
        embeddings=[
            f"results/embeddings/{m}/{STUDY.reference}.parquet"
            for m in STUDY.methods_with("own_embeddings")
        ],
        segments="results/transcripts/segments.parquet",
        theme_files=list(STUDY.sets.values()),
        transcripts=STUDY.transcripts,
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
        },
        confidential=archive_settings()["confidential"],
    script:
        "../../scripts/report.py"


rule headline_table:
    input:
        comparisons=expand(
            "results/metrics/{method}/comparisons.csv", method=STUDY.methods
        ),
        code=code("headline.py"),
    output:
        csv=report(
            "results/report/headline.csv",
            caption="../report/headline.rst",
            category="Summary",
        ),
        tex="results/report/headline.tex",
        png=report(
            "results/report/headline_intervals.png",
            caption="../report/headline_intervals.rst",
            category="Summary",
        ),
        svg="results/report/headline_intervals.svg",
    log:
        "logs/report/headline.log",
    params:
        methods=list(STUDY.methods),
        ran_on={m: [len(p), len(STUDY.pairs)] for m, p in STUDY.restricted.items()},
        reference=STUDY.reference,
        max_panels=max_pair_panels(),
    script:
        "../../scripts/headline.py"


rule tables_workbook:
    input:
        tables=list(workbook_tables().values()),
        code=code("tables_workbook.py"),
    output:
        "results/report/tables.xlsx",
    log:
        "logs/report/tables_workbook.log",
    params:
        titles=list(workbook_tables()),
    script:
        "../../scripts/tables_workbook.py"
