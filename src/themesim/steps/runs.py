"""The runs rule: run consistency (seeds 002-004) per method, within each run group."""

from __future__ import annotations

import pandas as pd

from themesim.io.files import write_csv, write_parquet
from themesim.io.themes import read_themes_parquet


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
    from themesim.kinds import get as get_kind
    from themesim.metrics.runs import clamp as clamp_matrix
    from themesim.metrics.runs import run_consistency, runs_matrix_long, runs_table

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
