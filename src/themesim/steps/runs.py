"""The runs rule: run consistency (seeds 002-004) per method, within each run group, and its
figure."""

from __future__ import annotations

import pandas as pd

from themesim.io.files import write_csv, write_parquet
from themesim.io.themes import read_themes_parquet
from themesim.kinds import get as get_kind
from themesim.metrics.sets.runs import clamp as clamp_matrix
from themesim.metrics.sets.runs import run_consistency, runs_matrix_long, runs_table
from themesim.report.plots.runs import runs_groups_heatmap
from themesim.steps.job import Job


def runs_tables(
    *,
    method: str,
    kind: str,
    groups: dict,
    themes: dict,
    embeddings: dict,
    clamp: bool,
    out_table,
    out_matrix,
) -> None:
    """Run consistency (seeds 002-004) of each group of runs, in one job per method.

    Runs are compared only within their group (one matrix per group; TF-IDF fitted on the
    group's runs alone), so unrelated sets never dilute the score.
    """
    tables = {r: read_themes_parquet(path) for r, path in themes.items()}
    parts, cells = [], []
    for group, runs in groups.items():
        runs = list(runs)
        M = get_kind(kind).run_matrix(runs, tables, embeddings)
        if clamp:
            M = clamp_matrix(M)
        table = runs_table(runs, M, method=method, group=group)
        table["run_consistency"] = run_consistency(M)
        parts.append(table)
        cells.append(runs_matrix_long(runs, M, group=group))
    write_csv(pd.concat(parts, ignore_index=True), out_table)
    write_parquet(pd.concat(cells, ignore_index=True), out_matrix)


def runs_tables_and_plot(job: Job) -> None:
    """The runs rule (inputs.metrics.runs_job): :func:`runs_tables`, then
    :func:`run_consistency_plot` from the files it wrote, in one job (a figure job of its
    own cost an interpreter start for a second of work)."""
    p, out = job.params, job.output
    runs_tables(
        method=p["method"],
        kind=p["kind"],
        groups=p["groups"],
        themes=job.input["themes"],
        embeddings=job.input["embeddings"],
        clamp=p["clamp"],
        out_table=out["table"],
        out_matrix=out["matrix"],
    )
    run_consistency_plot(
        method=p["method"],
        runs_csv=out["table"],
        runs_matrix=out["matrix"],
        out_png=out["png"],
        out_svg=out["svg"],
    )


def run_consistency_plot(*, method: str, runs_csv, runs_matrix, out_png, out_svg=None) -> None:
    """Run-consistency heatmaps of one method, one panel per run group, from its runs.csv and
    runs_matrix.parquet."""
    table = pd.read_csv(runs_csv, dtype={"run": str, "group": str}, keep_default_na=False)
    long = pd.read_parquet(runs_matrix)
    long = long.assign(
        group=long["group"].astype(str),
        run_a=long["run_a"].astype(str),
        run_b=long["run_b"].astype(str),
    )
    groups = []
    for group, rows in table.groupby("group", sort=False):
        names = rows["run"].tolist()
        M = (
            long[long["group"] == group]
            .pivot(index="run_a", columns="run_b", values="similarity")
            .reindex(index=names, columns=names)
            .to_numpy(float)
        )
        score = pd.to_numeric(rows["run_consistency"], errors="coerce")
        groups.append(
            {
                "group": group,
                "names": names,
                "M": M,
                "ncs": pd.to_numeric(rows["ncs"], errors="coerce").tolist(),
                "score": float(score.iloc[0]),
            }
        )
    runs_groups_heatmap(
        groups, title=f"{method}: similarity between runs", out_png=out_png, out_svg=out_svg
    )
