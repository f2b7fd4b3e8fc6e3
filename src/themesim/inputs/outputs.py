"""What `all` asks for, and what the archive packs."""

from __future__ import annotations

from themesim.config import ARCHIVE_DEFAULTS
from themesim.inputs import (
    Setup,
    at,
    calibration,
    ceiling,
    embed,
    grounding,
    metrics,
    plots,
    similarity,
    svg_of,
)
from themesim.paths import (
    CACHES,
    CALIBRATION_PLOT,
    DECISIONS,
    HEADLINE,
    RUNS,
    RUNS_MATRIX,
    SEGMENTS,
    SETS_THEMES,
    SIDE_BY_SIDE,
    SPLITS_JOINS,
    SUMMARY,
    WORKBOOK,
)
from themesim.study.sets import generated_csv

# one page per comparison (HTML and Markdown) beside the summaries, linked from them; here,
# not in themesim.paths, which every job's code digest reads
REPORT_PAGES = "results/report/comparisons"


def final_outputs(setup: Setup) -> list[str]:
    """What `all` asks for."""
    out = [
        SEGMENTS,
        *SIDE_BY_SIDE.values(),
        *HEADLINE.values(),
        WORKBOOK,
    ]
    for m in setup.study.methods:
        out += similarity.done(setup, m)
        # the transport plans' folder: Snakemake checks only the outputs asked for, so
        # a deleted manifest reruns the metrics job, which writes the folder anew
        out.append(metrics.transport_manifest(setup, m))
        out += metrics.tables(setup, m)
        if metrics.has_runs(setup, m):
            out.append(at(RUNS, method=m))
        out += grounding.outputs(setup, m)
        drawn = plots.heatmaps(setup, m)
        drawn += list(plots.method_plot_files(setup, m).values())
        out += drawn + svg_of(drawn) + plots.heatmap_folder(setup, m)
    out += [*SUMMARY.values(), REPORT_PAGES]
    for m in setup.study.methods:
        if calibration.has_calibration(setup, m):
            out += [calibration.table(setup, m), at(CALIBRATION_PLOT, method=m) + ".png"]
    return out


def archive_settings(setup: Setup) -> dict:
    return ARCHIVE_DEFAULTS | (setup.config.get("archive") or {})


def archive_zip(setup: Setup) -> str:
    from themesim.archive.build import archive_name

    return f"results/archive/{archive_name(setup.study.name)}.zip"


def archive_results(setup: Setup) -> list[str]:
    """The final outputs plus the side tables and theme embeddings their rules also write."""
    out = [f for f in final_outputs(setup) if f.startswith("results/")]
    for m in setup.study.methods:
        # The archive packs every file a manifest lists (themesim.archive.build).
        out += [
            similarity.manifest(setup, m),
            metrics.transport_manifest(setup, m),
            at(SETS_THEMES, method=m),
            at(SPLITS_JOINS, method=m),
            at(DECISIONS, method=m),
        ]
        if metrics.has_runs(setup, m):
            out.append(at(RUNS_MATRIX, method=m))
        out += embed.files(setup, m, setup.study.sets)
    out += ceiling.paraphrase_files(setup)
    return list(dict.fromkeys(out))


def archive_caches(setup: Setup) -> list[str]:
    """The LLM call caches beside the judge's, when their calls run."""
    out = [CACHES["generate"]] if setup.study.generated else []
    out += [CACHES["paraphrase"]] if ceiling.paraphrase_files(setup) else []
    return out + ([CACHES["coder"]] if grounding.llm_coded_sets(setup) else [])


def judge_cache(setup: Setup):
    """The judge's cache when a judge method runs (an accumulating file, not an output)."""
    return CACHES["judge"] if setup.study.methods_with("judge_cache") else None


def generated_files(setup: Setup) -> list[str]:
    """The CSVs of the LLM-generated runs (generate_themes), in run order."""
    return [generated_csv(run) for run in setup.study.generated]


def generate_prompt_files(setup: Setup) -> list[str]:
    from themesim.llm.generate import GenerateSettings
    from themesim.llm.prompts import prompt_paths

    name = setup.study.generate.get("prompt", GenerateSettings.prompt)
    return [str(p) for p in prompt_paths(name).values()]
