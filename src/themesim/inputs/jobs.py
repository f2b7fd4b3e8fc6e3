"""Each rule's job, built once from the study: one binder per rule, named after it.

A binder takes the Setup and the job's wildcards and returns a steps.job.Job: `input` the
files the job reads (the rule's `input:`, by name; {key: path} where the step looks a file up
by set or pair), `params` what else the step reads. The rule passes both as its one `job`
param, so a changed setting reruns exactly the jobs that read it (thresholds: metrics, never
embedding); its script hands the step the Job, with the rule's outputs (steps.runner.run_job).
"""

from __future__ import annotations

from themesim.inputs import Setup, ceiling, methods, outputs, plots, summary
from themesim.inputs import calibration as calibration_files
from themesim.inputs import embed as embed_files
from themesim.inputs import grounding as grounding_files
from themesim.inputs import metrics as metric_files
from themesim.inputs import similarity as similarity_files
from themesim.paths import (
    CACHES,
    COMPARISONS,
    DECISIONS,
    HEADLINE,
    PARAPHRASES,
    SEGMENTS,
    SIDE_BY_SIDE,
    SWEEP,
    THEME_TABLE,
    THRESHOLDS,
    VERDICTS,
)
from themesim.steps.job import Job

# ---------------------------------------------------------------- ingest and generate


def ingest_themes(setup: Setup, set: str) -> Job:  # `set`: the rule's wildcard
    """One theme file as its table; its within-set matrix's size is checked here when a
    method writes one."""
    study = setup.study
    within = any(set in study.sets_for(m) for m in study.methods_with("within_set_matrices"))
    return Job(
        input={"src": study.sets[set]},
        params={
            "set": set,
            "template": study.template,
            "level": study.levels.get(set, "all"),
            "within": within,
        },
    )


def qdpx_transcripts(setup: Setup) -> Job:
    return Job(input={"projects": setup.study.transcript_projects})


def ingest_transcripts(setup: Setup) -> Job:
    return Job(input={"transcripts": setup.study.transcripts})


def generate_themes(setup: Setup) -> Job:
    """Every LLM-generated run in one job (one local server for all)."""
    study = setup.study
    return Job(
        input={"segments": SEGMENTS, "prompts": outputs.generate_prompt_files(setup)},
        # runs: run name -> seed, in the order of the rule's outputs; the cache accumulates
        # (not an output: a failed job must never delete it)
        params={"runs": study.generated, "settings": study.generate, "cache": CACHES["generate"]},
    )


# ---------------------------------------------------------------- embed and similarity


def embed(setup: Setup, method: str) -> Job:
    """Every text a method embeds, in one job: every set (an abtt variant and the theme map
    read them all), the word-salad pools of the B sets of its comparisons, the segments."""
    study = setup.study
    null_sets = embed_files.embedded_null_sets(setup, study.pairs_for(method))
    null_files = embed_files.embedded_null_files(setup, method)
    return Job(
        input={
            "themes": embed_files.theme_map(setup),
            "segments": embed_files.segments(setup),
            "pairs": calibration_files.embedded_rated_pairs(setup, method),
        },
        params={
            "method": method,
            "spec": embed_files.settings(setup, method),
            "cache": embed_files.cache(setup),
            "nulls": dict(zip(null_sets, null_files, strict=True)),
            "pool": study.metrics["null_model"]["pool"],
            "seed": study.metrics["null_model"]["seed"],
            "top_k": study.metrics["quality"]["keywords_top_k"],
        },
        # an edit of the rated pairs reruns the calibration jobs, which encode its new
        # texts, not the embedding job and everything made from it
        ancient=("pairs",),
    )


def similarity(setup: Setup, method: str) -> Job:
    """Every pair file of a method, in one job (rules similarity_embedding, similarity_tfidf,
    ...: one per kind's similarity_rule); what it reads comes from the method's kind."""
    study = setup.study
    pairs = study.method_pairs(method)
    return Job(
        input={
            "themes": embed_files.theme_map(setup, similarity_files.sets(setup, method)),
            # every set's vectors: an abtt variant fits its correction on the study
            "embeddings": embed_files.file_map(setup, study.embeddings_of(method), study.sets),
            "matrices": similarity_files.matrix_map(setup, method, pairs),
            "rated": calibration_files.judged_rated_pairs(setup, method),
        },
        params={
            "method": method,
            "spec": similarity_files.spec(setup, method),
            "pairs": pairs,
            "files": similarity_files.files(setup, method, pairs),
            # an accumulating cache, not an output: a failed job must never delete it
            "cache": methods.similarity_cache(setup, method),
        },
        # an edit of the rated pairs reruns the calibration job, which judges its new pairs
        ancient=("rated",),
    )


# ---------------------------------------------------------------- metrics


def metrics(setup: Setup, method: str) -> Job:
    """The metric tables of a method's comparisons (steps.metrics.metric_tables), with the
    settings of its metric families, thresholds among them."""
    study = setup.study
    refs = embed_files.reference_sides(setup, method)
    return Job(
        input={
            "similarity": similarity_files.done(setup, method),
            "nulls": embed_files.null_folder(setup, method),
            "embeddings": embed_files.file_map(setup, method, refs),
            "themes": embed_files.theme_map(setup),
            "ceiling": ceiling.files(setup, method),
            "calibration": calibration_files.files(setup, method),
        },
        params={
            "method": method,
            "kind": methods.kind(setup, method),
            "reference": study.reference,
            "pairs": study.pairs_for(method),
            # the files of the similarity job's and this job's folders, pair by pair
            "files": {
                "similarity": similarity_files.files(setup, method),
                "transport": metric_files.transport_files(setup, method),
                "within": similarity_files.within_map(setup, method),
                "nulls": embed_files.null_map(setup, method),
            },
            "settings": metric_files.family_settings(setup, method),
            "decision": metric_files.decision_thresholds(setup, method),
            "sweep": study.sweep,
            "spec": similarity_files.spec(setup, method),
        },
    )


def set_quality(setup: Setup, method: str) -> Job:
    """Each set's quality under a method (steps.quality.set_quality_table)."""
    sets = setup.study.sets_for(method)
    within = similarity_files.within_map(setup, method)
    return Job(
        input={
            "themes": embed_files.theme_map(setup, sets),
            "within": similarity_files.done(setup, method) if within else [],
            "embeddings": embed_files.file_map(setup, method, sets),
            "keywords": embed_files.keyword_map(setup, method),
            "segment_embeddings": embed_files.segment_embedding_files(setup, method),
            "segments": SEGMENTS,
        },
        params={
            "method": method,
            "kind": methods.kind(setup, method),
            "within": within,
            "settings": setup.study.metrics["quality"],
        },
    )


def runs(setup: Setup, method: str) -> Job:
    """Run consistency within each of a method's run groups (steps.runs)."""
    runs = metric_files.method_runs(setup, method)
    return Job(
        input={
            "themes": embed_files.theme_map(setup, runs),
            "embeddings": embed_files.file_map(setup, method, runs),
        },
        params={
            "method": method,
            "kind": methods.kind(setup, method),
            "groups": metric_files.run_groups(setup, method),
            "clamp": metric_files.family_settings(setup, method)["clamp"],
        },
    )


def calibration(setup: Setup, method: str) -> Job:
    """A method's scores of the rated pairs, its summary and isotonic fit: one thread, as
    the embedding and judge jobs already scored the pairs (only pairs edited since then are
    encoded or judged here)."""
    study = setup.study
    settings = calibration_files.settings(setup)
    matrix_pairs = calibration_files.matrix_pairs(setup, method)
    return Job(
        input={
            "pairs": settings["pairs"],
            "embeddings": calibration_files.embeddings(setup, method),
            # after the jobs that leave the pairs' scores in their caches
            "embedded": calibration_files.after_embed(setup, method),
            "judged": calibration_files.after_judge(setup, method),
            "themes": embed_files.theme_map(setup, calibration_files.sets(setup, method)),
            "matrices": similarity_files.matrix_map(setup, method, matrix_pairs),
            # the method's theme tables: which rated pairs are cells of its comparisons
            "study_themes": embed_files.theme_map(setup, study.sets_for(method)),
        },
        params={
            "method": method,
            "kind": methods.kind(setup, method),
            "spec": calibration_files.spec(setup, method),
            "cache": calibration_files.cache(setup, method),
            "comparisons": study.pairs_for(method),
            "settings": {k: settings[k] for k in ("positive_from", "bootstrap", "prevalence")},
        },
    )


def paraphrase_reference(setup: Setup) -> Job:
    """The paraphrase ceiling's paraphrases of the reference themes (config `ceiling:`)."""
    return Job(
        input={"themes": embed_files.themes(setup, [setup.study.reference])[0]},
        params={"settings": ceiling.paraphrase_settings(setup), "cache": CACHES["paraphrase"]},
    )


def ceiling_similarity(setup: Setup, method: str) -> Job:
    """Each reference theme's similarity to its paraphrases under a method."""
    return Job(
        input={
            "paraphrases": PARAPHRASES,
            "embeddings": embed_files.files(setup, method, [setup.study.reference]),
        },
        params={
            "method": method,
            "kind": methods.kind(setup, method),
            "spec": ceiling.spec(setup, method),
            "cache": embed_files.cache(setup),
        },
    )


# ---------------------------------------------------------------- grounding


def segment_labels(setup: Setup, method: str) -> Job:
    """Every set's labels on the transcript segments under a method, in one job (the
    transcripts read once): coded segments, located quotes and the coder's labels."""
    study, g = setup.study, setup.study.grounding
    sets = study.sets_for(method)
    coded = grounding_files.coded_sets(setup, method)
    assigned = grounding_files.assigned_sets(setup, method)
    llm_sets = grounding_files.llm_coded_sets(setup, method)
    return Job(
        input={
            "themes": embed_files.theme_map(setup, sets),
            "segments": SEGMENTS,
            "transcripts": study.transcripts,
            "coded": {s: study.segments[s] for s in coded},
            "llm_scores": grounding_files.llm_score_map(setup, llm_sets),
            "embeddings": embed_files.file_map(setup, method, assigned),
            "segment_embeddings": (
                embed_files.segment_embedding_files(setup, method) if assigned else []
            ),
        },
        params={
            "method": method,
            "spec": similarity_files.spec(setup, method),
            # each set's files in the job's folder
            "labels": dict(zip(sets, grounding_files.label_files(setup, method), strict=True)),
            "quotes": dict(zip(sets, grounding_files.quote_files(setup, method), strict=True)),
            # a .qdpx set's level, and its user: only that user's codings are its segments
            "levels": {s: study.levels.get(s, "all") for s in coded},
            "users": {s: study.users[s] for s in coded if s in study.users},
            "coding": {
                "assign": g["assign"],
                "assign_threshold": (
                    grounding_files.assign_threshold(setup, method) if assigned else None
                ),
                "quote_cutoff": g["quote_cutoff"],
                "exclude_speakers": g["exclude_speakers"],
                "coder": g["coder"],
                "coder_kinds": {s: grounding_files.coder_of(setup, method, s) for s in sets},
            },
        },
    )


def grounding(setup: Setup, method: str) -> Job:
    """A method's grounded metrics of every comparison, and their figures. The first
    threshold and the scale come from the metrics job's thresholds.csv (not ancient: then
    Snakemake would skip this job's own reasons whenever the metrics job reruns, and a new
    first threshold would leave grounding stale)."""
    study, g = setup.study, setup.study.grounding
    sets = study.sets_for(method)
    return Job(
        input={
            "similarity": similarity_files.done(setup, method),
            "themes": embed_files.theme_map(setup, sets),
            "labels": grounding_files.label_folder(setup, method),
            "segments": SEGMENTS,
            "thresholds": metric_files.thresholds(setup, method),
            # scale: calibrated maps S through the isotonic fit (the within-set matrices of
            # scale: z come from the similarity job)
            "scale_fit": plots.scale_fit(setup, method),
            # agreement across codebooks: P(match) through the isotonic fit, where one exists
            "codebook_fit": plots.codebook_fit(setup, method),
        },
        params={
            "method": method,
            "pairs": study.pairs_for(method),
            "files": {
                "labels": dict(zip(sets, grounding_files.label_files(setup, method), strict=True)),
                "quotes": dict(zip(sets, grounding_files.quote_files(setup, method), strict=True)),
                "similarity": similarity_files.files(setup, method),
                "long": grounding_files.long_files(setup, method),
                "heatmaps": grounding_files.heatmaps(setup, method),
            },
            "scale": plots.scale_files(setup, method),
            "codebooks": plots.codebook_similarity(setup, method),
            "settings": grounding_files.settings(setup),
            "coder": {
                "bases": g["basis"],
                "sets": grounding_files.coder_sets(setup, method),
                "assign": g["assign"],
                "coders": grounding_files.coder_descriptions(setup, method),
            },
        },
    )


def coder_llm(setup: Setup) -> Job:
    """The LLM coder's scores of every LLM-coded set: its answers do not depend on the
    method, and are cached (results/cache/coder.sqlite)."""
    g, sets = setup.study.grounding, grounding_files.llm_coded_sets(setup)
    return Job(
        input={"themes": embed_files.theme_map(setup, sets), "segments": SEGMENTS},
        params={
            "llm": g["coder"]["llm"],
            "exclude_speakers": g["exclude_speakers"],
            "out": grounding_files.llm_score_map(setup, sets),
            "cache": CACHES["coder"],
        },
    )


def coder_agreement(setup: Setup) -> Job:
    """How far the coder agrees with the human coding of every set that has one."""
    study = setup.study
    return Job(
        input={
            "labels": [grounding_files.label_folder(setup, m) for m in study.methods],
            "themes": embed_files.theme_map(setup),
            "segments": SEGMENTS,
        },
        params={
            "methods": {
                m: {
                    "sets": study.sets_for(m),
                    "coded_sets": grounding_files.coded_sets(setup, m),
                    "coders": grounding_files.coder_descriptions(setup, m),
                    "labels": grounding_files.label_files(setup, m),
                }
                for m in study.methods
            },
            "exclude_speakers": study.grounding["exclude_speakers"],
        },
    )


def qdpx_project(setup: Setup, method: str) -> Job:
    """The study's codings under a method as one REFI-QDA project (`snakemake qdpx`)."""
    study = setup.study
    sets = study.sets_for(method)
    coded = grounding_files.coded_sets(setup, method)
    return Job(
        input={
            "themes": embed_files.theme_map(setup, sets),
            "labels": grounding_files.label_folder(setup, method),
            "segments": SEGMENTS,
            "transcripts": study.transcripts,
            "coded": {s: study.segments[s] for s in coded},
        },
        params={
            "method": method,
            "labels": dict(zip(sets, grounding_files.label_files(setup, method), strict=True)),
            "coder_sets": grounding_files.coder_sets(setup, method),
            "levels": {s: study.levels.get(s, "all") for s in coded},
            # a .qdpx set's user: only that user's codings are its coded segments
            "users": {s: study.users[s] for s in coded if s in study.users},
        },
    )


# ---------------------------------------------------------------- figures


def heatmap(setup: Setup, method: str, pair: str) -> Job:
    """One reference pair's heatmap, at the method's first threshold (thresholds.csv)."""
    a, b = plots.reference_pair(setup, pair)
    return Job(
        input={
            "thresholds": metric_files.thresholds(setup, method),
            "similarity": similarity_files.done(setup, method),
            "themes": embed_files.theme_map(setup, [a, b]),
            "scale_fit": plots.scale_fit(setup, method),
            # the pairs the within-set z rule drops are crossed
            "decisions": summary.all_tables(setup, DECISIONS)[method],
        },
        params={
            "method": method,
            "pair": (a, b),
            "similarity": similarity_files.files(setup, method, [(a, b)])[0],
            "scale": plots.scale_files(setup, method, (a, b)),
        },
    )


def pair_heatmaps(setup: Setup, method: str) -> Job:
    """The heatmaps of the pairs without the reference (comparisons.all_pairs), in one
    folder; above plots.max_pair_heatmaps pairs, one overview instead."""
    others = plots.other_pairs(setup, setup.study.pairs_for(method))
    return Job(
        input={
            "thresholds": metric_files.thresholds(setup, method),
            "comparisons": summary.all_tables(setup, COMPARISONS)[method],
            "similarity": similarity_files.done(setup, method),
            "themes": embed_files.theme_map(setup),
            "scale_fit": plots.scale_fit(setup, method),
            "decisions": summary.all_tables(setup, DECISIONS)[method],
        },
        params={
            "method": method,
            "pairs": others,
            "similarities": similarity_files.files(setup, method, others),
            "scale": plots.scale_files(setup, method),
            "max_heatmaps": plots.plot_limit(setup, "max_pair_heatmaps"),
        },
    )


# ---------------------------------------------------------------- report and archive

# The metric tables report_parts reads of every method, by their names in its job.
FIGURE_TABLES = {
    "comparisons": COMPARISONS,
    "thresholds": THRESHOLDS,
    "sweeps": SWEEP,
    "themes_tables": THEME_TABLE,
}


def verdicts(setup: Setup) -> Job:
    """The verdicts of every generator against the analysts (docs/verdicts.md): every
    method's whole similarity tables, read from both sides at one set size."""
    study = setup.study
    grounded = grounding_files.grounded_methods(setup)
    return Job(
        input={
            "comparisons": summary.all_tables(setup, COMPARISONS),
            "thresholds": summary.all_tables(setup, THRESHOLDS),
            "themes_tables": summary.all_tables(setup, THEME_TABLE),
            "similarity": {m: similarity_files.manifest(setup, m) for m in study.methods},
            "themes": embed_files.theme_map(setup),
            # each method's segment agreement of theme pairs: the segments route
            "grounding_pairs": {m: grounding_files.tables(setup, m)[1] for m in grounded},
            # the strength route on the P(match) scale
            "calibration_fits": {
                m: calibration_files.isotonic_fit(setup, m)
                for m in calibration_files.strength_fits(setup)
            },
        },
        params={
            "methods": list(study.methods),
            "reference": study.reference,
            "analysts": study.analysts,
            "generators": study.generators,
            "equivalence": study.equivalence,
            "primary": study.verdict["primary"],
            "preferred": study.methods_with("own_embeddings"),
        },
    )


def report_parts(setup: Setup) -> Job:
    """The report's tables and the figures that read only metric tables, in one job:
    the headline (from verdicts.csv), the workbook, methods side by side, each method's figures
    (report/figures.py)."""
    study = setup.study
    grounded = grounding_files.grounded_methods(setup)
    workbook = summary.workbook_tables(setup)
    vectors = plots.theme_map_methods(setup)
    # method -> each of the metric tables every method's figures read
    tables = {name: summary.all_tables(setup, t) for name, t in FIGURE_TABLES.items()}
    return Job(
        input=tables
        | {
            # the workbook's first sheet, headline.csv, is written here
            "tables": [t for t in workbook.values() if t != HEADLINE["csv"]],
            "verdicts": VERDICTS,
            "themes": embed_files.theme_map(setup),
            # beside the workbook's tables: the grounding and calibration tables
            "grounding_pairs": {m: grounding_files.tables(setup, m)[1] for m in grounded},
            "calibration_fits": {
                m: calibration_files.isotonic_fit(setup, m)
                for m in calibration_files.strength_fits(setup)
            },
            # each method with theme vectors (the theme map): set -> the vectors that give them
            "embeddings": {
                m: embed_files.file_map(setup, study.embeddings_of(m), study.sets) for m in vectors
            },
        },
        params={
            "methods": {
                m: {
                    "gamma": metric_files.family_settings(setup, m)["gamma"],
                    "kind": methods.kind(setup, m) if m in vectors else None,
                    "d": study.methods[m].get("d") if m in vectors else None,
                    "figures": plots.method_figure_files(setup, m),
                }
                for m in study.methods
            },
            "reference": study.reference,
            "max_panels": plots.plot_limit(setup, "max_pair_panels"),
            "ran_on": {m: [len(p), len(study.pairs)] for m, p in study.restricted.items()},
            # the outputs of the job's own figures (report_parts_outputs)
            "headline": HEADLINE,
            "side_by_side": SIDE_BY_SIDE,
            "verdicts": {
                "reference_group": study.reference_group,
                "equivalence": study.equivalence,
            },
            # tables.xlsx: its sheets, and what its index names without holding it
            "workbook": {"tables": workbook, "named": summary.workbook_named(setup)},
        },
    )


def summary_report(setup: Setup) -> Job:
    """The summary report (HTML and Markdown) of every result (outputs.results)."""
    study = setup.study
    return Job(
        input={
            "results": outputs.results(setup),
            "segments": SEGMENTS,
            # the inputs table: each theme file, counted in its ingested table
            "theme_files": dict(study.sets),
            "theme_tables": embed_files.theme_map(setup),
            "transcripts": study.transcripts,
            "coded": summary.coded_inputs(setup),
            "precomputed": summary.precomputed_files(setup),
            # each embedding method's reference vectors: the model's files in provenance
            "embeddings": [
                embed_files.files(setup, m, [study.reference])[0]
                for m in study.methods_with("own_embeddings")
            ],
            # an LLM judge's model and server build are read from its similarity files
            "judges": {
                m: similarity_files.manifest(setup, m) for m in study.methods_with("judge_cache")
            },
        },
        params={
            "study": {
                "name": study.name,
                "description": study.description,
                "reference": study.reference,
                "side_by_side_png": SIDE_BY_SIDE["png"],
                "intervals_png": HEADLINE["png"],
                "confidential": bool(outputs.archive_settings(setup)["confidential"]),
                "headline_csv": HEADLINE["csv"],
                "headline_tex": HEADLINE["tex"],
                "verdicts_csv": VERDICTS,
            },
            "methods": summary.report_methods(setup),
            "config": setup.config,
            "code_version": setup.code_version,
        },
    )


def archive(setup: Setup) -> Job:
    """The study as one zip for a paper (`snakemake archive`): inputs, config, results, the
    workflow's own files by name (so it can be rerun), environment and checksums."""
    study = setup.study
    settings = outputs.archive_settings(setup)
    return Job(
        input={
            "results": outputs.archive_results(setup),
            "theme_files": dict(study.sets),
            "transcripts": study.transcripts,
            "coded": summary.coded_inputs(setup),
            "precomputed": summary.precomputed_inputs(setup),
            "code": outputs.code_files(setup),
        },
        params={
            "config": setup.config,
            "study": {"name": study.name, "description": study.description},
            "judge_cache": outputs.judge_cache(setup),
            "caches": outputs.archive_caches(setup),
            "code_version": setup.code_version,
            "confidential": bool(settings["confidential"]),
            "authors": list(settings["authors"]),
        },
    )
