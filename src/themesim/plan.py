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
    methods,
    metrics,
    plots,
    similarity,
    svg_of,
)
from themesim.paths import (
    CACHES,
    CALIBRATION_PLOT,
    CODER_AGREEMENT,
    COMPARISONS,
    DECISIONS,
    GROUNDING_LONG,
    HEADLINE,
    OVERVIEW,
    RUNS,
    RUNS_MATRIX,
    SEGMENTS,
    SETS,
    SETS_THEMES,
    SIDE_BY_SIDE,
    SPLITS_JOINS,
    SUMMARY,
    SWEEP,
    SWEEP_PLOT,
    THEME_TABLE,
    VERDICTS,
    WORKBOOK,
)


class Plan:
    """The files of a study: what each rule reads and writes, per method."""

    def __init__(self, study: Study, config: dict) -> None:
        self.study = study
        self.config = config
        self.setup = Setup(study, config)

    # ------------------------------------------------------------ the report

    def workbook_tables(self) -> dict[str, str]:
        """Sheet title -> metric table of results/report/tables.xlsx, one sheet each."""
        out = {"headline": HEADLINE["csv"], "verdicts": VERDICTS}
        for m in self.study.methods:
            out |= {
                f"{m} comparisons": at(COMPARISONS, method=m),
                f"{m} themes": at(THEME_TABLE, method=m),
                f"{m} sweep": at(SWEEP, method=m),
                f"{m} sets": at(SETS, method=m),
                f"{m} decision changes": at(DECISIONS, method=m),
                f"{m} splits joins": at(SPLITS_JOINS, method=m),
            }
            if metrics.has_runs(self.setup, m):
                out[f"{m} runs"] = at(RUNS, method=m)
            if calibration.has_calibration(self.setup, m):
                out[f"{m} calibration"] = calibration.table(self.setup, m)
        if grounding.has_grounding(self.setup):
            out["coder agreement"] = CODER_AGREEMENT
        return out

    def workbook_named(self) -> dict[str, str]:
        """What tables.xlsx names in its index but does not hold: the per-pair and per-set
        parquet files (matrices, embeddings, grounding's long tables), title -> path."""
        out = {}
        for m in self.study.methods:
            out[f"{m} similarity matrices"] = similarity.folder(self.setup, m) + "/"
            if metrics.has_runs(self.setup, m):
                out[f"{m} runs matrix"] = at(RUNS_MATRIX, method=m)
            if grounding.has_grounding(self.setup):
                out[f"{m} grounding long tables"] = at(GROUNDING_LONG, method=m) + "/"
                out[f"{m} grounding pairs per transcript"] = grounding.transcripts(self.setup, m)
        out["embeddings"] = "results/embeddings/"
        return out

    def all_tables(self, table: str) -> list[str]:
        """One metric table of every method: table, its pattern in themesim.paths
        (COMPARISONS, THEME_TABLE, SWEEP, SETS, DECISIONS, THRESHOLDS)."""
        return [at(table, method=m) for m in self.study.methods]

    def runs_tables(self) -> list[str]:
        return [at(RUNS, method=m) for m in self.study.methods if metrics.has_runs(self.setup, m)]

    def pairs_overview_files(self, method: str) -> dict:
        """The all-pairs overview the report shows when the folder holds one (report key)."""
        has = plots.heatmap_folder(self.setup, method)
        return {"pairs_overview_png": at(OVERVIEW, method=method) + ".png"} if has else {}

    def report_method_files(self, method: str) -> dict:
        """What the summary report reads of a method by key (figures, tables, grounding)."""
        runs = {"runs_csv": at(RUNS, method=method)} if metrics.has_runs(self.setup, method) else {}
        tables = {
            "sets_csv": at(SETS, method=method),
            "decisions_csv": at(DECISIONS, method=method),
        }
        return (
            plots.method_plot_files(self.setup, method)
            | tables
            | runs
            | grounding.report_files(self.setup, method)
            | self.pairs_overview_files(method)
        )

    def report_methods(self) -> dict:
        """The summary report's description of each method."""
        panels = plots.plot_limit(self.setup, "max_pair_panels")
        return {
            m: {
                "description": s.get("description", m),
                "op": methods.op(self.setup, m),
                "kind": methods.kind(self.setup, m),
                "reference": self.study.reference,
                "max_pair_panels": panels,
            }
            for m, s in self.study.methods.items()
        }

    def precomputed_inputs(self) -> dict[str, list[str]]:
        """Per method that reads score matrices made elsewhere, the files it reads."""
        return {
            m: similarity.matrix_files(self.setup, m, self.study.method_pairs(m))
            for m in self.study.methods_with("reads_matrices")
        }

    def precomputed_files(self) -> list[str]:
        """Score matrices made elsewhere that methods read (hashed in the report's inputs)."""
        return [f for files in self.precomputed_inputs().values() for f in files]

    def coded_inputs(self) -> dict[str, str]:
        """set -> its coded-segments file, when that is not the set's own theme file (a .qdpx
        is both): an input the archive and the report's inputs hold."""
        return {s: p for s, p in self.study.segments.items() if p != self.study.sets.get(s)}

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
