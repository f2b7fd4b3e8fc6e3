"""Every results path of a study, once, and each method's file lists.

The workflow's rules read their paths from here (or from another rule's output); the final
outputs, the report's inputs, the archive and the figures are lists built here from the study
(themesim.config.Study) and what each method's kind does (themesim.kinds). Nothing here
imports Snakemake: the rules wrap these paths in `ancient()`/`report()` where they need to.
"""

from __future__ import annotations

from themesim.config import ARCHIVE_DEFAULTS, Study, generated_csv
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
    SWEEP_PLOT,
    WORKBOOK,
)


class Plan:
    """The files of a study: what each rule reads and writes, per method."""

    def __init__(self, study: Study, config: dict) -> None:
        self.study = study
        self.config = config
        self.setup = Setup(study, config)

    # ------------------------------------------------------------ final outputs and archive

    def final_outputs(self) -> list[str]:
        """What `all` asks for."""
        out = [
            SEGMENTS,
            *SIDE_BY_SIDE.values(),
            *HEADLINE.values(),
            WORKBOOK,
        ]
        for m in self.study.methods:
            out += similarity.done(self.setup, m)
            # the transport plans' folder: Snakemake checks only the outputs asked for, so
            # a deleted manifest reruns the metrics job, which writes the folder anew
            out.append(metrics.transport_manifest(self.setup, m))
            out += metrics.tables(self.setup, m)
            if metrics.has_runs(self.setup, m):
                out.append(at(RUNS, method=m))
            out += grounding.outputs(self.setup, m)
            drawn = plots.heatmaps(self.setup, m) + [at(SWEEP_PLOT, method=m) + ".png"]
            drawn += list(plots.method_plot_files(self.setup, m).values())
            out += drawn + svg_of(drawn) + plots.heatmap_folder(self.setup, m)
        out += list(SUMMARY.values())
        for m in self.study.methods:
            if calibration.has_calibration(self.setup, m):
                out += [calibration.table(self.setup, m), at(CALIBRATION_PLOT, method=m) + ".png"]
        return out

    def archive_settings(self) -> dict:
        return ARCHIVE_DEFAULTS | (self.config.get("archive") or {})

    def archive_zip(self) -> str:
        from themesim.archive.build import archive_name

        return f"results/archive/{archive_name(self.study.name)}.zip"

    def archive_results(self) -> list[str]:
        """The final outputs plus the side tables and theme embeddings their rules also write."""
        out = [f for f in self.final_outputs() if f.startswith("results/")]
        for m in self.study.methods:
            # The archive packs every file a manifest lists (themesim.archive.build).
            out += [
                similarity.manifest(self.setup, m),
                metrics.transport_manifest(self.setup, m),
                at(SETS_THEMES, method=m),
                at(SPLITS_JOINS, method=m),
                at(DECISIONS, method=m),
            ]
            if metrics.has_runs(self.setup, m):
                out.append(at(RUNS_MATRIX, method=m))
            out += embed.files(self.setup, m, self.study.sets)
        out += ceiling.paraphrase_files(self.setup)
        return list(dict.fromkeys(out))

    def archive_caches(self) -> list[str]:
        """The LLM call caches beside the judge's, when their calls run."""
        out = [CACHES["generate"]] if self.study.generated else []
        out += [CACHES["paraphrase"]] if ceiling.paraphrase_files(self.setup) else []
        return out + ([CACHES["coder"]] if grounding.llm_coded_sets(self.setup) else [])

    def judge_cache(self):
        """The judge's cache when a judge method runs (an accumulating file, not an output)."""
        return CACHES["judge"] if self.study.methods_with("judge_cache") else None

    def generated_files(self) -> list[str]:
        """The CSVs of the LLM-generated runs (generate_themes), in run order."""
        return [generated_csv(run) for run in self.study.generated]

    def generate_prompt_files(self) -> list[str]:
        from themesim.llm.generate import GenerateSettings
        from themesim.llm.prompts import prompt_paths

        name = self.study.generate.get("prompt", GenerateSettings.prompt)
        return [str(p) for p in prompt_paths(name).values()]
