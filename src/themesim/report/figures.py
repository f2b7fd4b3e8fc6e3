"""What each per-method figure is: one name (its file stem), the job that draws it (and, for
the report_parts job, the function), its `snakemake --report` category, and what the summary
report says of it.

themesim.inputs reads `METHOD_FIGURES` for the files (`all`, the report's inputs, the
archive, report_parts' outputs), the report's views and templates for the words and
report_parts for what to draw. No imports: the Snakefile and the report's jobs read it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """One figure a method may have: its file stem under results/plots/{method}/ (its one
    name: the report's key for its PNG is the stem + "_png"), the job that draws it, its
    `snakemake --report` category and caption (workflow/report/<stem>.rst), and the kind
    capability it needs (None: every method). In the summary report: its heading, its alt
    text (before " for method <name>"), its caption (HTML) and the line shown without it;
    place "figures" puts it after the threshold sweep, in this order, "runs" under the
    runs table, "files" names its file only (the caption says why).

    draws: for the report_parts job, the function that draws it, as "module:function"
    (steps.report_parts.method_figure imports it; themesim.deps counts it as the job's code). It
    is called with the method's `steps.report_parts.MethodTables` and out_png, out_svg."""

    stem: str
    drawn_by: str
    category: str
    needs: str | None = None
    title: str = ""
    alt: str = ""
    caption: str = ""
    missing: str = ""
    place: str = "figures"
    draws: str = ""

    @property
    def key(self) -> str:
        return f"{self.stem}_png"


# Adding a per-method figure is one entry here (plus its drawing and its caption file).
# A figure of report_parts names its function in `draws`: no script or rule changes.
METHOD_FIGURES = (
    Figure(
        "sweep", "report_parts", "Threshold sweeps",
        title="Threshold sweep",
        alt="Scores by threshold",
        caption="Scores at every threshold from 0 to 1; dashed lines: the configured "
        "threshold(s).",
        missing="Threshold-sweep figure not available.",
        draws="themesim.report.plots.sweep:draw_sweep",
    ),
    Figure(
        "distributions", "report_parts", "Distributions",
        title="Distributions",
        alt="Matched-pair similarity and gap distributions",
        caption="Left: similarity of the one-to-one pairs that meet the first threshold. "
        "Right: gap between each theme's best and second-best match (A and B themes). Boxes: "
        "quartiles; whiskers: min and max; dots: every value.",
        missing="Distribution figure not available.",
        draws="themesim.report.plots.distributions:draw_distributions",
    ),
    Figure(
        "confidence", "report_parts", "Confidence profiles",
        title="Confidence profile",
        alt="Four-way confidence profile",
        caption="Share of each set's themes in each match category at the first threshold: "
        "confident unique, ambiguous, clear but poor, no good match.",
        missing="Confidence-profile figure not available.",
        draws="themesim.report.plots.distributions:draw_confidence",
    ),
    Figure(
        "theme_map", "report_parts", "Theme maps", "theme_vectors",
        title="Theme map",
        alt="Theme map",
        caption="a projection on two principal components: distances on it are not the "
        "method's similarities, so the report does not show it",
        missing="No theme map: this method's scores come without theme vectors.",
        draws="themesim.report.plots.theme_map:draw_theme_map",
        place="files",
    ),
    Figure(
        "run_consistency", "runs", "Run consistency", "runs",
        title="Run consistency",
        alt="Run consistency heatmap",
        caption="Similarity between every pair of runs of a run group, one panel per group; "
        "row labels give each run's NCS.",
        missing="No run-consistency figure: it needs a run group (config run_groups, or "
        "generated runs) and an embedding or TF-IDF method.",
        place="runs",
    ),
)  # fmt: skip

BY_STEM = {f.stem: f for f in METHOD_FIGURES}
