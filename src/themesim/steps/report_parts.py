"""The report_parts rule: the report's tables and the figures that read only metric tables,
in one job (one interpreter start, one import of pandas, matplotlib and openpyxl): headline
(from verdicts.csv), the workbook of every metric table, methods side by side, and each method's
figures of report/figures.py (the summary report itself: steps/report.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from importlib import import_module

import pandas as pd

from themesim.io.files import record
from themesim.io.themes import read_themes_parquet
from themesim.kinds import get as get_kind
from themesim.metrics.settings import equivalence_settings
from themesim.metrics.thresholds import Thresholds, read_thresholds
from themesim.metrics.verdicts.equivalence import verdict_note
from themesim.report.figures import BY_STEM
from themesim.report.headline import headline_frame, write_headline
from themesim.report.plots.side_by_side import methods_side_by_side
from themesim.report.restriction import ran_on_notes
from themesim.report.threshold_plots import headline_intervals
from themesim.report.verdicts import read_verdicts
from themesim.report.workbook import beside_tables, tables_workbook
from themesim.steps.job import Job
from themesim.steps.runner import run_tasks


def report_parts(job: Job) -> None:
    """Every part of the job (inputs.jobs.report_parts), `threads` at a time: the headline
    and verdicts, then the workbook (they are its first sheets), methods side by side and
    each method's figures, each drawn by the function its report/figures.py entry names."""
    i, p = job.input, job.params
    tasks = [
        [(headline_tables, {"job": job}), (tables_workbook, _workbook(job))],
        (
            side_by_side,
            dict(
                methods=list(p["methods"]),
                sweeps=list(i["sweeps"].values()),
                thresholds=list(i["thresholds"].values()),
                out_png=p["side_by_side"]["png"],
                out_svg=p["side_by_side"]["svg"],
                reference=p["reference"],
                max_panels=p["max_panels"],
            ),
        ),
    ]
    for m, given in p["methods"].items():
        tables = MethodTables(
            method=m,
            themes_csv=i["themes_tables"][m],
            sweep_csv=i["sweeps"][m],
            thresholds_csv=i["thresholds"][m],
            gamma=float(given["gamma"]),
            reference=p["reference"],
            max_panels=p["max_panels"],
            kind=given["kind"],
            d=given["d"],
            set_files=i["themes"],
            embeddings=i["embeddings"].get(m, {}),
        )
        for stem, out in given["figures"].items():
            kwargs = dict(stem=stem, tables=tables, out_png=out["png"], out_svg=out["svg"])
            tasks.append((method_figure, kwargs))
    run_tasks(tasks, workers=job.threads)


def _workbook(job: Job) -> dict:
    """tables_workbook's arguments: the metric tables, and beside them the tables their
    jobs also write (sets_themes.csv and the grounding and calibration tables)."""
    i, book = job.input, job.params["workbook"]
    tables = dict(book["tables"])
    return dict(
        tables=tables,
        out=job.output["workbook"],
        extra=beside_tables(tables, i["grounding_pairs"], i["calibration_fits"]),
        named=dict(book["named"]),
    )


def headline_tables(job: Job) -> None:
    """The at-a-glance table for a paper: CSV (full precision) and LaTeX (booktabs), and the
    dot-and-whisker figure of Hungarian F1 and its interval that opens the report (above
    ``max_panels`` comparisons: the reference's and a box of all); ran_on: method -> (its
    comparisons, the study's) for methods restricted by `comparisons:`, noted under the
    LaTeX table. verdicts.csv (the verdicts rule): the headline carries each set's
    generator's primary verdict."""
    i, p, v = job.input, job.params, job.params["verdicts"]
    by_method, group = dict(i["comparisons"]), list(v["reference_group"] or ())
    notes = list(ran_on_notes({m: list(r) for m, r in p["ran_on"].items()}))
    if len(group) > 1:
        notes.append(verdict_note(group, **equivalence_settings(dict(v["equivalence"]))))
    df, out = headline_frame(by_method, read_verdicts(i["verdicts"])), p["headline"]
    write_headline(df, out_csv=out["csv"], out_tex=out["tex"], notes=notes)
    for table in (out["csv"], out["tex"]):  # checked by the report and the archive
        record(table)
    headline_intervals(
        df,
        out_png=out["png"],
        out_svg=out["svg"],
        reference=p["reference"],
        max_panels=p["max_panels"],
    )


def side_by_side(
    *,
    methods,
    sweeps,
    thresholds,
    out_png,
    out_svg=None,
    reference: str | None = None,
    max_panels: int | None = None,
) -> None:
    """thresholds: each method's thresholds.csv, in ``methods`` order."""
    methods_side_by_side(
        {m: pd.read_csv(p) for m, p in zip(methods, sweeps, strict=True)},
        thresholds={m: read_thresholds(p) for m, p in zip(methods, thresholds, strict=True)},
        metric="hungarian_f1",
        out_png=out_png,
        out_svg=out_svg,
        reference=reference,
        max_panels=max_panels,
    )


def _theme_table(path) -> pd.DataFrame:
    """themes.csv as text (a set or theme called "NA" stays a name); plots parse numbers."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@dataclass(frozen=True)
class MethodTables:
    """What the report_parts figures of one method read, each table read when first asked.

    themes_csv and sweep_csv: the method's themes.csv and sweep.csv; thresholds_csv (values
    and op) and gamma: its match rule; reference and max_panels bound the figures with a row
    per comparison (`plots.max_pair_panels`). For the theme map: the method's kind and its
    `d`, and set -> file of the set's themes (set_files) and of its embeddings (a kind that
    reads them)."""

    method: str
    themes_csv: str
    sweep_csv: str
    thresholds_csv: str
    gamma: float
    reference: str | None
    max_panels: int | None
    kind: str | None = None
    d: int | None = None
    set_files: dict = field(default_factory=dict)
    embeddings: dict = field(default_factory=dict)

    @cached_property
    def themes_table(self) -> pd.DataFrame:
        return _theme_table(self.themes_csv)

    @cached_property
    def sweep_table(self) -> pd.DataFrame:
        return pd.read_csv(self.sweep_csv)

    @cached_property
    def thresholds(self) -> Thresholds:
        """The method's thresholds and op as its metrics job resolved them."""
        return read_thresholds(self.thresholds_csv)

    @property
    def op(self) -> str:
        return self.thresholds.op

    @cached_property
    def set_themes(self) -> dict:
        return {s: read_themes_parquet(p) for s, p in self.set_files.items()}

    @cached_property
    def theme_vectors(self) -> dict:
        return get_kind(self.kind).vectors({"d": self.d}, self.set_themes, self.embeddings)

    def draw(self, save, table: pd.DataFrame, what: str, *, out_png, out_svg=None, **kwargs):
        """save(table, ...) titled "{method}: {what}", bounded like every figure of the method
        that has a row per comparison (reference, max_panels)."""
        return save(
            table,
            **kwargs,
            title=f"{self.method}: {what}",
            out_png=out_png,
            out_svg=out_svg,
            reference=self.reference,
            max_panels=self.max_panels,
        )


def method_figure(*, stem: str, tables: MethodTables, out_png, out_svg=None) -> None:
    """One figure of report_parts: the function its report/figures.py entry names draws it."""
    module, name = BY_STEM[stem].draws.split(":")
    getattr(import_module(module), name)(tables, out_png=out_png, out_svg=out_svg)
