"""The runs rule: run consistency (seeds 002-004) per method."""

from __future__ import annotations

from themesim.io.files import write_csv, write_parquet
from themesim.io.themes import read_themes_parquet


def runs_tables(
    *,
    method: str,
    kind: str,
    runs,
    themes: dict,
    embeddings: dict,
    clamp: bool,
    out_table,
    out_matrix,
) -> None:
    """Run consistency (seeds 002-004) over every non-reference set, in one job per method."""
    from themesim.kinds import get as get_kind
    from themesim.metrics.runs import clamp as clamp_matrix
    from themesim.metrics.runs import run_consistency, runs_matrix_long, runs_table

    tables = {r: read_themes_parquet(themes[r]) for r in runs}
    M = get_kind(kind).run_matrix(runs, tables, embeddings)
    if clamp:
        M = clamp_matrix(M)
    table = runs_table(runs, M, method=method)
    table["run_consistency"] = run_consistency(M)
    write_csv(table, out_table)
    write_parquet(runs_matrix_long(runs, M), out_matrix)
