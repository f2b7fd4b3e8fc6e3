# One job per method; the transport plans of its comparisons (as many as the method's
# `comparisons:` give it) fill a folder, listed in the folder's manifest (themesim.io.manifest).
rule metrics:
    input:
        similarity=lambda wc: similarity.done(SETUP, wc.method),
        nulls=lambda wc: embed.null_folder(SETUP, wc.method),
        embeddings=lambda wc: embed.files(
            SETUP, wc.method, embed.reference_sides(SETUP, wc.method)
        ),
        themes=embed.themes(SETUP),
        ceiling=lambda wc: ceiling.files(SETUP, wc.method),
        calibration=lambda wc: calibration.files(SETUP, wc.method),
    output:
        comparisons=report(
            paths.COMPARISONS,
            caption="../report/comparisons.rst",
            category="Metric tables",
            subcategory="{method}",
        ),
        themes=paths.THEME_TABLE,
        sweep=paths.SWEEP,
        transport=directory(paths.TRANSPORT),
        transport_manifest=paths.TRANSPORT_MANIFEST,
        splits=paths.SPLITS_JOINS,
        decisions=paths.DECISIONS,
        # thresholds and scale resolved once: plots, grounding and report read them here
        thresholds=paths.THRESHOLDS,
    log:
        "logs/metrics/{method}.log",
    benchmark:
        "benchmarks/metrics/{method}.tsv"
    params:
        code=code("metrics.py"),
        kind=lambda wc: methods.kind(SETUP, wc.method),
        sets=list(STUDY.sets),
        pairs=lambda wc: STUDY.pairs_for(wc.method),
        similarity_paths=lambda wc: similarity.files(SETUP, wc.method),
        transport_paths=lambda wc: metrics.transport_files(SETUP, wc.method),
        within_sets=lambda wc: similarity.within_sets(SETUP, wc.method),
        within_paths=lambda wc: similarity.within_files(SETUP, wc.method),
        null_sets=lambda wc: embed.null_sets(SETUP, wc.method),
        null_paths=lambda wc: embed.null_files(SETUP, wc.method),
        embedded_sets=lambda wc: embed.embedded_sets(
            SETUP, wc.method, embed.reference_sides(SETUP, wc.method)
        ),
        settings=lambda wc: metrics.family_settings(SETUP, wc.method),
        decision=lambda wc: metrics.decision_thresholds(SETUP, wc.method),
        sweep=STUDY.sweep,
        spec=lambda wc: similarity.spec(SETUP, wc.method),
        reference=STUDY.reference,
    script:
        "../../scripts/metrics.py"


rule set_quality:
    input:
        themes=lambda wc: embed.method_themes(SETUP, wc.method),
        within=lambda wc: (
            similarity.done(SETUP, wc.method)
            if similarity.within_sets(SETUP, wc.method)
            else []
        ),
        embeddings=lambda wc: embed.files(SETUP, wc.method, STUDY.sets_for(wc.method)),
        keywords=lambda wc: embed.keyword_files(SETUP, wc.method),
        segment_embeddings=lambda wc: embed.segment_embedding_files(SETUP, wc.method),
        segments=paths.SEGMENTS,
    output:
        sets=report(
            paths.SETS,
            caption="../report/sets.rst",
            category="Metric tables",
            subcategory="{method}",
        ),
        themes=paths.SETS_THEMES,
    log:
        "logs/metrics/{method}_sets.log",
    benchmark:
        "benchmarks/set_quality/{method}.tsv"
    params:
        code=code("set_quality.py"),
        kind=lambda wc: methods.kind(SETUP, wc.method),
        sets=lambda wc: STUDY.sets_for(wc.method),
        within_sets=lambda wc: similarity.within_sets(SETUP, wc.method),
        within_paths=lambda wc: similarity.within_files(SETUP, wc.method),
        embedded_sets=lambda wc: embed.embedded_sets(
            SETUP, wc.method, STUDY.sets_for(wc.method)
        ),
        settings=STUDY.metrics["quality"],
    script:
        "../../scripts/set_quality.py"


rule runs:
    input:
        themes=lambda wc: embed.themes(SETUP, metrics.method_runs(SETUP, wc.method)),
        embeddings=lambda wc: embed.files(
            SETUP, wc.method, metrics.method_runs(SETUP, wc.method)
        ),
    output:
        table=report(
            paths.RUNS,
            caption="../report/runs.rst",
            category="Metric tables",
            subcategory="{method}",
        ),
        matrix=paths.RUNS_MATRIX,
        # The figure too: a job of its own cost an interpreter start for a second of work.
        png=report(
            f"{paths.RUNS_PLOT}.png",
            caption="../report/run_consistency.rst",
            category="Run consistency",
            subcategory="{method}",
        ),
        svg=f"{paths.RUNS_PLOT}.svg",
    log:
        "logs/metrics/{method}_runs.log",
    benchmark:
        "benchmarks/runs/{method}.tsv"
    wildcard_constraints:
        method=methods.methods_with(SETUP, "runs"),
    params:
        code=code("runs.py"),
        kind=lambda wc: methods.kind(SETUP, wc.method),
        runs=lambda wc: metrics.method_runs(SETUP, wc.method),
        groups=lambda wc: metrics.run_groups(SETUP, wc.method),
        clamp=lambda wc: metrics.family_settings(SETUP, wc.method)["clamp"],
    script:
        "../../scripts/runs.py"
