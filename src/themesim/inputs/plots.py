"""Each method's figures: the heatmaps, the sweep and the report's per-method figures."""

from __future__ import annotations

from themesim.config import PLOTS_DEFAULTS
from themesim.inputs import (
    Report,
    Setup,
    at,
    calibration,
    methods,
    metrics,
    pair_names,
    regex_of,
    similarity,
)
from themesim.paths import (
    HEADLINE,
    HEATMAP,
    HEATMAPS,
    OTHER_HEATMAP,
    PLOTS,
    SIDE_BY_SIDE,
)
from themesim.report.figures import METHOD_FIGURES, Figure


def folder(setup: Setup, method: str) -> str:
    return at(PLOTS, method=method)


def reference_pairs(setup: Setup, pairs) -> list:
    """Pairs with a heatmap file each (rule heatmap): the reference vs each set, which is
    every pair of a study without `comparisons.all_pairs`."""
    return [p for p in pairs if p[0] == setup.study.reference]


def other_pairs(setup: Setup, pairs) -> list:
    """The rest of all pairs: their heatmaps go to one folder output per method, so the
    DAG does not declare (and look up) pairs-squared files."""
    return [p for p in pairs if p[0] != setup.study.reference]


def heatmap_pairs(setup: Setup) -> str:
    """Wildcard pattern of the pair names with a heatmap file each (rule heatmap): the
    study's reference pairs, never a path in pair_heatmaps' folder beside them."""
    return regex_of(pair_names(reference_pairs(setup, setup.study.pairs)))


def reference_pair(setup: Setup, name: str) -> tuple[str, str]:
    """The reference pair a pair name ({pair} of a heatmap path) names."""
    pairs = reference_pairs(setup, setup.study.pairs)
    return dict(zip(pair_names(pairs), pairs, strict=True))[name]


def heatmaps(setup: Setup, method: str) -> list[str]:
    pairs = reference_pairs(setup, setup.study.pairs_for(method))
    return [at(HEATMAP, method=method, pair=p) + ".png" for p in pair_names(pairs)]


def heatmap_folder(setup: Setup, method: str) -> list[str]:
    """The folder of the other pairs' heatmaps; none without `comparisons.all_pairs`."""
    has = other_pairs(setup, setup.study.pairs_for(method))
    return [at(HEATMAPS, method=method)] if has else []


def heatmap_paths(setup: Setup, method: str) -> list[str]:
    """Every pair's heatmap PNG of the method, in the study's pair order (what the report
    links)."""
    pairs = setup.study.pairs_for(method)
    return [
        at(HEATMAP if a == setup.study.reference else OTHER_HEATMAP, method=method, pair=p) + ".png"
        for (a, _), p in zip(pairs, pair_names(pairs), strict=True)
    ]


def scale_fit(setup: Setup, method: str) -> list[str]:
    """The isotonic fit that puts a `scale: calibrated` method's scores on its scale."""
    if metrics.family_settings(setup, method)["scale"] != "calibrated":
        return []
    return [calibration.isotonic_fit(setup, method)]


def scale_files(setup: Setup, method: str, sets=None) -> dict:
    """The files the heatmaps and grounding read to put scores on the method's scale
    (metrics.method_scale), of those sets' within-set matrices (default: all the method
    has); the scale itself they read from thresholds.csv."""
    z = metrics.family_settings(setup, method)["scale"] == "z"
    within = within_matrices(setup, method) if z else {}
    if sets is not None:
        within = {s: f for s, f in within.items() if s in sets}
    fit = scale_fit(setup, method)
    return {"within": within, "fit": fit[0] if fit else None}


def codebook_fit(setup: Setup, method: str) -> list[str]:
    """The isotonic fit that agreement across codebooks reads (grounding.csv's
    cu_alpha_codebooks): only with rated pairs and within-set matrices."""
    if not (calibration.has_calibration(setup, method) and similarity.within_sets(setup, method)):
        return []
    return [calibration.isotonic_fit(setup, method)]


def codebook_similarity(setup: Setup, method: str) -> dict:
    """What grounding reads for cu_alpha_codebooks: the method's isotonic fit (None
    without one) and every set's within-set matrix (metrics/agreement/codebooks.py)."""
    fit = codebook_fit(setup, method)
    within = within_matrices(setup, method) if fit else {}
    return {"fit": fit[0] if fit else None, "within": within}


def within_matrices(setup: Setup, method: str) -> dict:
    """Set -> the file of its within-set similarity matrix, for every set the method has one."""
    sets, files = similarity.within_sets(setup, method), similarity.within_files(setup, method)
    return dict(zip(sets, files, strict=True))


def plot_limit(setup: Setup, key: str):
    """plots.max_pair_heatmaps / plots.max_pair_panels as given (null = no limit), else
    the default."""
    given = setup.config.get("plots") or {}
    return given[key] if key in given else PLOTS_DEFAULTS[key]


def figures(setup: Setup, method: str, drawn_by: str | None = None) -> list[Figure]:
    """The per-method figures the method has (of one job when drawn_by is given)."""
    return [
        f
        for f in METHOD_FIGURES
        if (drawn_by is None or f.drawn_by == drawn_by)
        and (f.needs is None or has(setup, method, f.needs))
    ]


def has(setup: Setup, method: str, capability: str) -> bool:
    return (
        metrics.has_runs(setup, method)
        if capability == "runs"
        else getattr(methods.kind_of(setup, method), capability)
    )


def figure_path(setup: Setup, method: str, figure: Figure, ext: str = "png") -> str:
    return f"{folder(setup, method)}/{figure.stem}.{ext}"


def method_plot_files(setup: Setup, method: str) -> dict[str, str]:
    """Every extra plot of a method by its report key (PNG); each has an .svg beside it."""
    return {f.key: figure_path(setup, method, f) for f in figures(setup, method)}


def method_figure_files(setup: Setup, method: str) -> dict[str, dict[str, str]]:
    """A method's figures drawn by report_parts: stem -> {"png": path, "svg": path}."""
    return {
        f.stem: {ext: figure_path(setup, method, f, ext) for ext in ("png", "svg")}
        for f in figures(setup, method, "report_parts")
    }


def report_parts_outputs(setup: Setup) -> list:
    """report_parts' outputs but the verdicts and the workbook: paths, the PNGs as Report
    entries for `snakemake --report`."""
    out = [
        Report(HEADLINE["csv"], "headline.rst", "Summary"),
        HEADLINE["tex"],
        Report(HEADLINE["png"], "headline_intervals.rst", "Summary"),
        HEADLINE["svg"],
        Report(SIDE_BY_SIDE["png"], "side_by_side.rst", "Methods side by side"),
        SIDE_BY_SIDE["svg"],
    ]
    for m in setup.study.methods:
        for f in figures(setup, m, "report_parts"):
            png = figure_path(setup, m, f)
            out += [Report(png, f"{f.stem}.rst", f.category, m), figure_path(setup, m, f, "svg")]
    return out


def theme_map_methods(setup: Setup) -> list[str]:
    return [m for m in setup.study.methods if methods.kind_of(setup, m).theme_vectors]
