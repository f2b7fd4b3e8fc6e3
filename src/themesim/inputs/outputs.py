"""What `all` asks for, and what the archive packs."""

from __future__ import annotations

from themesim.archive.build import archive_name
from themesim.archive.build import code_files as workflow_files
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
from themesim.llm.generate import GenerateSettings
from themesim.llm.prompts import prompt_paths
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
    VERDICTS,
    WORKBOOK,
)
from themesim.study.sets import generated_csv

# one page per comparison (HTML and Markdown) beside the summaries, linked from them; here,
# not in themesim.paths, which every job's code digest reads
REPORT_PAGES = "results/report/comparisons"


def results(setup: Setup) -> list[str]:
    """Every table and figure of the study, listed once: what the summary report's job waits
    for (it shows or names them), and with the report what `all` asks for and the archive
    packs."""
    out = [SEGMENTS, *HEADLINE.values(), VERDICTS, WORKBOOK, *SIDE_BY_SIDE.values()]
    out += grounding.coder_agreement_files(setup)
    for m in setup.study.methods:
        out += method_results(setup, m)
    return out


def method_results(setup: Setup, method: str) -> list[str]:
    """A method's tables and figures (each figure's .svg beside its .png)."""
    # The folders' manifests: Snakemake checks only the outputs asked for, so a deleted
    # manifest reruns its job, which writes the folder anew.
    out = similarity.done(setup, method) + [metrics.transport_manifest(setup, method)]
    out += metrics.tables(setup, method)
    if metrics.has_runs(setup, method):
        out.append(at(RUNS, method=method))
    out += grounding.outputs(setup, method)
    drawn = plots.heatmaps(setup, method) + list(plots.method_plot_files(setup, method).values())
    out += drawn + svg_of(drawn) + plots.heatmap_folder(setup, method)
    if calibration.has_calibration(setup, method):
        out += [calibration.table(setup, method), at(CALIBRATION_PLOT, method=method) + ".png"]
    return out


def final_outputs(setup: Setup) -> list[str]:
    """What `all` asks for: the results and the summary report of them (with its page per
    comparison)."""
    return results(setup) + [*SUMMARY.values(), REPORT_PAGES]


def archive_settings(setup: Setup) -> dict:
    return ARCHIVE_DEFAULTS | (setup.config.get("archive") or {})


def code_files(setup: Setup) -> dict[str, str]:
    """The workflow's own files, by their names in the archive (so it can be rerun)."""
    return {name: str(path) for name, path in workflow_files(setup.basedir).items()}


def archive_zip(setup: Setup) -> str:
    return f"results/archive/{archive_name(setup.study.name)}.zip"


def archive_results(setup: Setup) -> list[str]:
    """The final outputs plus the side tables and theme embeddings their rules also write."""
    out = final_outputs(setup)
    for m in setup.study.methods:
        # The archive packs every file a manifest lists (themesim.archive.build).
        out += [
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
    name = setup.study.generate.get("prompt", GenerateSettings.prompt)
    return [str(p) for p in prompt_paths(name).values()]
