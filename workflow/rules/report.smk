rule summary_report:
    input:
        comparisons=expand(
            "results/metrics/{method}/comparisons.csv", method=STUDY.methods
        ),
        themes_tables=expand(
            "results/metrics/{method}/themes.csv", method=STUDY.methods
        ),
        sweeps=expand("results/metrics/{method}/sweep.csv", method=STUDY.methods),
        heatmaps=[h for m in STUDY.methods for h in heatmaps(m)],
        sweep_plots=expand("results/plots/{method}/sweep.png", method=STUDY.methods),
        side_by_side="results/plots/methods_side_by_side.png",
        embeddings=[
            f"results/embeddings/{m}/{STUDY.reference}.parquet"
            for m in STUDY.methods_of("sentence_transformer")
        ],
        segments="results/transcripts/segments.parquet",
        theme_files=list(STUDY.sets.values()),
        transcripts=STUDY.transcripts,
        code=code("report.py", "textblock.py"),
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
            }
            for m, s in STUDY.methods.items()
        },
        pairs=pair_names(STUDY.pairs),
        sets=STUDY.sets,
        config=lambda wc: config,
        code_version=CODE_VERSION,
    script:
        "../../scripts/report.py"
