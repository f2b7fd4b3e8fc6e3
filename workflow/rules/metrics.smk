# A copy of the rule per group of methods restricted to the same `comparisons:`.
for suffix, pattern, pairs in pair_variants(STUDY.methods):

    share_cluster_settings("metrics", suffix)

    rule:
        name:
            f"metrics{suffix}"
        input:
            similarity=lambda wc: similarity_done(wc.method),
            nulls=lambda wc: null_files(wc.method),
            embeddings=lambda wc: embedding_files(wc.method, reference_sides(wc.method)),
            themes=theme_parquets(),
            ceiling=lambda wc: ceiling_files(wc.method),
            calibration=lambda wc: calibration_files(wc.method),
            code=code("metrics.py"),
        output:
            comparisons=report(
                "results/metrics/{method}/comparisons.csv",
                caption="../report/comparisons.rst",
                category="Metric tables",
                subcategory="{method}",
            ),
            themes="results/metrics/{method}/themes.csv",
            sweep="results/metrics/{method}/sweep.csv",
            transport_manifest="results/metrics/{method}/transport/manifest.csv",
            transport=expand(
                "results/metrics/{{method}}/transport/{pair}.parquet",
                pair=declared_pairs(
                    pairs, variant_manifests(pairs, transport_manifest)
                ),
            ),
            splits="results/metrics/{method}/transport/splits_joins.csv",
            decisions="results/metrics/{method}/decision_changes.csv",
        log:
            "logs/metrics/{method}.log",
        benchmark:
            "benchmarks/metrics/{method}.tsv"
        wildcard_constraints:
            method=pattern,
        params:
            kind=lambda wc: STUDY.methods[wc.method]["kind"],
            sets=list(STUDY.sets),
            pairs=lambda wc: STUDY.pairs_for(wc.method),
            similarity_paths=lambda wc: similarity_files(wc.method),
            transport_paths=lambda wc: transport_files(wc.method),
            within_sets=lambda wc: within_sets(wc.method),
            within_paths=lambda wc: within_files(wc.method),
            null_sets=lambda wc: null_sets(wc.method),
            embedded_sets=lambda wc: embedded_sets(
                wc.method, reference_sides(wc.method)
            ),
            settings=lambda wc: family_settings(wc.method),
            decision=lambda wc: decision_thresholds(wc.method),
            sweep=STUDY.sweep,
            spec=lambda wc: similarity_spec(wc.method),
            reference=STUDY.reference,
        script:
            "../../scripts/metrics.py"


rule set_quality:
    input:
        themes=lambda wc: method_themes(wc.method),
        within=lambda wc: similarity_done(wc.method) if within_sets(wc.method) else [],
        embeddings=lambda wc: embedding_files(wc.method, STUDY.sets_for(wc.method)),
        keywords=lambda wc: keyword_files(wc.method),
        segment_embeddings=lambda wc: segment_embedding_files(wc.method),
        segments="results/transcripts/segments.parquet",
        code=code("set_quality.py"),
    output:
        sets=report(
            "results/metrics/{method}/sets.csv",
            caption="../report/sets.rst",
            category="Metric tables",
            subcategory="{method}",
        ),
        themes="results/metrics/{method}/sets_themes.csv",
    log:
        "logs/metrics/{method}_sets.log",
    benchmark:
        "benchmarks/set_quality/{method}.tsv"
    params:
        kind=lambda wc: STUDY.methods[wc.method]["kind"],
        sets=lambda wc: STUDY.sets_for(wc.method),
        within_sets=lambda wc: within_sets(wc.method),
        within_paths=lambda wc: within_files(wc.method),
        embedded_sets=lambda wc: embedded_sets(wc.method, STUDY.sets_for(wc.method)),
        settings=STUDY.metrics["quality"],
    script:
        "../../scripts/set_quality.py"


rule runs:
    input:
        themes=lambda wc: [
            f"results/themes/{s}.parquet" for s in method_runs(wc.method)
        ],
        embeddings=lambda wc: embedding_files(wc.method, method_runs(wc.method)),
        code=code("runs.py"),
    output:
        table=report(
            "results/metrics/{method}/runs.csv",
            caption="../report/runs.rst",
            category="Metric tables",
            subcategory="{method}",
        ),
        matrix="results/metrics/{method}/runs_matrix.parquet",
        # The figure too: a job of its own cost an interpreter start for a second of work.
        png=report(
            "results/plots/{method}/run_consistency.png",
            caption="../report/run_consistency.rst",
            category="Run consistency",
            subcategory="{method}",
        ),
        svg="results/plots/{method}/run_consistency.svg",
    log:
        "logs/metrics/{method}_runs.log",
    benchmark:
        "benchmarks/runs/{method}.tsv"
    wildcard_constraints:
        method=methods_with("runs"),
    params:
        kind=lambda wc: STUDY.methods[wc.method]["kind"],
        runs=lambda wc: method_runs(wc.method),
        groups=lambda wc: run_groups(wc.method),
        clamp=lambda wc: bool(STUDY.methods[wc.method].get("clamp", False)),
    script:
        "../../scripts/runs.py"
