"""`themesim score`: every coverage and one-to-one metric of a matrix CSV, and with
--families the other families of a comparison."""

from __future__ import annotations

import sys
from pathlib import Path

from themesim.cli_output import render
from themesim.cli_sizes import check_cost, score_cost, score_read_cost
from themesim.metrics.comparison import Settings, comparison_rows
from themesim.metrics.sets.coverage import score
from themesim.similarity import align_matrix, read_matrix_csv


def cmd_score(args) -> int:
    files = [Path(p) for p in (args.matrix, args.within_a, args.within_b) if p]
    need, how = score_read_cost(sum(p.stat().st_size for p in files if p.is_file()))
    smaller = "Score a smaller matrix (a subset of themes)"
    check_cost(args.matrix, "reading the matrices", need, 0.0, args.max_minutes, how, smaller)
    S, rows, cols = read_matrix_csv(args.matrix)
    families = bool(args.families or args.within_a or args.within_b)
    seconds, how = score_cost(*S.shape, len(args.threshold), families)
    check_cost(args.matrix, "scoring it", 0, seconds, args.max_minutes, how, smaller)
    if not families:
        table = score(S, args.threshold, args.op)
    else:
        within = {}
        for side, path, names in (("a", args.within_a, rows), ("b", args.within_b, cols)):
            if path:
                W, wr, wc = read_matrix_csv(path)
                within[side] = align_matrix(W, wr, wc, names, names, str(path))
        settings = Settings(
            thresholds=args.threshold,
            op=args.op,
            gamma=args.gamma,
            bootstrap={"n": args.bootstrap, "seed": args.seed},
        )
        table, _ = comparison_rows(S, settings, W_a=within.get("a"), W_b=within.get("b"))
    sys.stdout.write(render(table, args.format, args.op))
    return 0
