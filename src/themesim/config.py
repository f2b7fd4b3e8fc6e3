"""The study a config describes: theme sets, comparisons and active methods.

Checked when the workflow is parsed, so a wrong path or name fails in the first second. The
schema check comes first (themesim.schema); the checks of each part are in themesim.study.
"""

from __future__ import annotations

from themesim.coder.settings import bases, coder_settings
from themesim.comparisons import method_pairs
from themesim.defaults import default, section_defaults
from themesim.errors import InputError, did_you_mean
from themesim.io.refi_qda import source_transcripts
from themesim.kinds import get as get_kind
from themesim.llm.paraphrase import ParaphraseSettings
from themesim.metrics.settings import equivalence_settings, metrics_settings
from themesim.study import Study
from themesim.study.groups import (
    analyst_pairs,
    check_groups,
    primary_comparison,
    reference_group,
    run_groups,
)
from themesim.study.methods import active_methods, check_sweep
from themesim.study.names import check_name_lengths
from themesim.study.sets import (
    generated_csv,
    generated_runs,
    identical_files,
    set_entries,
    set_segments,
    set_users,
    transcript_files,
)

# The defaults of the study-level sections below: the schema's (themesim.defaults).
CEILING_DEFAULTS = default("ceiling")  # active, k; the rest: the paraphrase settings'
# Figure limits of a study with many comparisons (`plots:`; null = no limit).
PLOTS_DEFAULTS = section_defaults("plots")
ARCHIVE_DEFAULTS = section_defaults("archive")


def _ceiling(config: dict) -> dict:
    """ceiling: with defaults, its paraphrase settings checked when it is active."""
    ceiling = CEILING_DEFAULTS | (config.get("ceiling") or {})
    if ceiling["active"]:
        ParaphraseSettings(**{k: v for k, v in ceiling.items() if k != "active" and v is not None})
    return ceiling


# grounding: without its coder (themesim.coder.settings); bootstrap is read for one release
# (0 still turns the intervals off).
GROUNDING_DEFAULTS = {k: v for k, v in section_defaults("grounding").items() if k != "coder"}


def _restricted(study: Study) -> dict[str, list[tuple[str, str]]]:
    """Methods whose `comparisons:` names fewer than all the study's comparisons."""
    out = {}
    for m, spec in study.methods.items():
        pairs = method_pairs(m, spec.get("comparisons"), study.sets, study.pairs)
        if pairs != study.pairs:
            out[m] = pairs
    return out


def prepare(config: dict) -> Study:
    """Check the config beyond its schema and work out the sets and comparisons."""
    sets = set_entries(config)
    transcripts = transcript_files(config)
    projects = [] if transcripts else [p for p in sets.values() if p.lower().endswith(".qdpx")]
    if projects:  # issue 12: the sources' text becomes the transcripts when none are given
        transcripts = source_transcripts(projects)
    generated, generate = generated_runs(config, sets, transcripts)
    sets |= {run: generated_csv(run) for run in generated}  # made by the generate rule
    if len(sets) < 2:
        raise InputError(
            "config theme_sets", "needs at least two theme sets", "List the theme files to compare"
        )
    reference = config.get("reference") or next(iter(sets))
    if reference not in sets:
        raise InputError(
            "config reference",
            f"{reference!r} is not one of the theme sets {sorted(sets)}"
            f"{did_you_mean(reference, sets)}",
            "Name the reference set by its set name (the file stem unless name: is given)",
        )
    sets = {reference: sets[reference], **{k: v for k, v in sets.items() if k != reference}}
    names = list(sets)
    if (config.get("comparisons") or {}).get("all_pairs"):
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    else:
        pairs = [(reference, b) for b in names[1:]]
    study_cfg = section_defaults("study") | (config.get("study") or {})
    specs, thresholds = active_methods(config)
    study = Study(
        name=study_cfg["name"],
        description=study_cfg["description"],
        reference=reference,
        sets=sets,
        transcripts=transcripts,
        template=config.get("text_template", default("text_template")),
        op=config.get("op", default("op")),
        sweep=check_sweep(config.get("sweep") or {}),
        methods=specs,
        thresholds=thresholds,
        metrics=metrics_settings(config.get("metrics")),
        pairs=pairs,
        generated=generated,
        generate=generate,
    )
    study.segments, study.levels = set_segments(config, sets)
    study.users = set_users(config, sets, study.segments)
    study.grounding = GROUNDING_DEFAULTS | (config.get("grounding") or {})
    study.grounding["coder"] = coder_settings(study.grounding)  # nested defaults filled in
    study.grounding["basis"] = bases(study.grounding)
    study.run_groups = run_groups(config, sets, generated)
    study.ceiling = _ceiling(config)
    study.transcript_projects = projects if transcripts else []
    study.reference_group = reference_group(config, sets, reference)
    check_groups(study.reference_group, study.run_groups)
    study.pairs = study.pairs + analyst_pairs(study.pairs, names, study.reference_group)
    study.restricted = _restricted(study)
    study.equivalence = equivalence_settings(config.get("equivalence"))
    study.verdict = {"primary": primary_comparison(config, study.thresholds)}
    for m, spec in study.methods.items():
        get_kind(spec["kind"]).check_pairs(m, spec, study.pairs_for(m))
    check_name_lengths(config, study)
    study.notes = identical_files({k: v for k, v in sets.items() if k not in generated})
    return study
