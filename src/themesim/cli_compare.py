"""`themesim compare`: two theme files compared with one method that reads no matrices."""

from __future__ import annotations

import sys

from themesim.cli_output import render
from themesim.cli_sizes import check_cost, compare_cost
from themesim.errors import InputError
from themesim.io.themes import read_theme_file
from themesim.kinds import DEFAULT_METHODS
from themesim.kinds import get as get_kind
from themesim.metrics.sets.coverage import score
from themesim.steps.similarity import similarity_for


def cmd_compare(args) -> int:
    usable = sorted(m for m, s in DEFAULT_METHODS.items() if not get_kind(s["kind"]).reads_matrices)
    if args.method not in usable:
        raise InputError(f"--method {args.method}", "is not usable here", f"Use one of {usable}")
    spec = DEFAULT_METHODS[args.method]
    a = read_theme_file(args.a_file, text_template=args.template)
    b = read_theme_file(args.b_file, text_template=args.template)
    need, seconds, how = compare_cost(len(a), len(b), args.method)
    check_cost(f"{args.a_file} vs {args.b_file}", "comparing them", need, seconds,
               args.max_minutes, how, "Compare smaller theme files")  # fmt: skip
    S = similarity_for(spec, a, b)
    thresholds = args.threshold or spec["thresholds"]
    table = score(S, thresholds, args.op)
    print(
        f"{a['set'].iloc[0]} (A, {len(a)} themes) vs {b['set'].iloc[0]} (B, {len(b)} themes)"
        f" — method {args.method}"
    )
    sys.stdout.write(render(table, args.format, args.op))
    return 0
