"""What the summary report and the workbook read."""

from __future__ import annotations

from themesim.inputs import (
    Setup,
    at,
    calibration,
    grounding,
    methods,
    metrics,
    pair_names,
    plots,
    similarity,
)
from themesim.paths import (
    CODER_AGREEMENT,
    COMPARISONS,
    DECISIONS,
    GROUNDING_LONG,
    HEADLINE,
    OVERVIEW,
    RUNS,
    RUNS_MATRIX,
    SETS,
    SPLITS_JOINS,
    SWEEP,
    THEME_TABLE,
    THRESHOLDS,
    VERDICTS,
)


def workbook_tables(setup: Setup) -> dict[str, str]:
    """Sheet title -> metric table of results/report/tables.xlsx, one sheet each."""
    out = {"headline": HEADLINE["csv"], "verdicts": VERDICTS}
    for m in setup.study.methods:
        out |= {
            f"{m} comparisons": at(COMPARISONS, method=m),
            f"{m} themes": at(THEME_TABLE, method=m),
            f"{m} sweep": at(SWEEP, method=m),
            f"{m} sets": at(SETS, method=m),
            f"{m} decision changes": at(DECISIONS, method=m),
            f"{m} splits joins": at(SPLITS_JOINS, method=m),
        }
        if metrics.has_runs(setup, m):
            out[f"{m} runs"] = at(RUNS, method=m)
        if calibration.has_calibration(setup, m):
            out[f"{m} calibration"] = calibration.table(setup, m)
    if grounding.has_grounding(setup):
        out["coder agreement"] = CODER_AGREEMENT
    return out


def workbook_named(setup: Setup) -> dict[str, str]:
    """What tables.xlsx names in its index but does not hold: the per-pair and per-set
    parquet files (matrices, embeddings, grounding's long tables), title -> path."""
    out = {}
    for m in setup.study.methods:
        out[f"{m} similarity matrices"] = similarity.folder(setup, m) + "/"
        if metrics.has_runs(setup, m):
            out[f"{m} runs matrix"] = at(RUNS_MATRIX, method=m)
        if grounding.has_grounding(setup):
            out[f"{m} grounding long tables"] = at(GROUNDING_LONG, method=m) + "/"
            out[f"{m} grounding pairs per transcript"] = grounding.transcripts(setup, m)
    out["embeddings"] = "results/embeddings/"
    return out


def all_tables(setup: Setup, table: str) -> dict[str, str]:
    """Method -> one metric table of it: table, its pattern in themesim.paths
    (COMPARISONS, THEME_TABLE, SWEEP, THRESHOLDS)."""
    return {m: at(table, method=m) for m in setup.study.methods}


def pairs_overview_files(setup: Setup, method: str) -> dict:
    """The all-pairs overview the report shows when the folder holds one (report key)."""
    has = plots.heatmap_folder(setup, method)
    return {"pairs_overview_png": at(OVERVIEW, method=method) + ".png"} if has else {}


def report_method_files(setup: Setup, method: str) -> dict:
    """What the summary report reads of a method by key (figures, tables, grounding)."""
    runs = {"runs_csv": at(RUNS, method=method)} if metrics.has_runs(setup, method) else {}
    tables = {
        "sets_csv": at(SETS, method=method),
        "decisions_csv": at(DECISIONS, method=method),
    }
    return (
        plots.method_plot_files(setup, method)
        | tables
        | runs
        | grounding.report_files(setup, method)
        | pairs_overview_files(setup, method)
    )


def report_methods(setup: Setup) -> dict:
    """What the summary report shows of each method: its description, tables and figures."""
    study = setup.study
    panels = plots.plot_limit(setup, "max_pair_panels")
    out = {}
    for m, spec in study.methods.items():
        pairs = pair_names(study.pairs_for(m))
        out[m] = {
            "description": spec.get("description", m),
            "kind": methods.kind(setup, m),
            "reference": study.reference,
            "max_pair_panels": panels,
            "comparisons_csv": at(COMPARISONS, method=m),
            "thresholds_csv": at(THRESHOLDS, method=m),
            "themes_csv": at(THEME_TABLE, method=m),
            "sweep_csv": at(SWEEP, method=m),
            "heatmaps": dict(zip(pairs, plots.heatmap_paths(setup, m), strict=True)),
            "ran_on": [len(pairs), len(study.pairs)],
        } | report_method_files(setup, m)
    return out


def precomputed_inputs(setup: Setup) -> dict[str, list[str]]:
    """Per method that reads score matrices made elsewhere, the files it reads."""
    return {
        m: similarity.matrix_files(setup, m, setup.study.method_pairs(m))
        for m in setup.study.methods_with("reads_matrices")
    }


def precomputed_files(setup: Setup) -> list[str]:
    """Score matrices made elsewhere that methods read (hashed in the report's inputs)."""
    return [f for files in precomputed_inputs(setup).values() for f in files]


def coded_inputs(setup: Setup) -> dict[str, str]:
    """set -> its coded-segments file, when that is not the set's own theme file (a .qdpx
    is both): an input the archive and the report's inputs hold."""
    return {s: p for s, p in setup.study.segments.items() if p != setup.study.sets.get(s)}
