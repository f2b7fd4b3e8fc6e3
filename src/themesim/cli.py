"""The `themesim` command: score a matrix, compare two theme files, verify an archive, or run
the validation suite."""

from __future__ import annotations

import argparse
import io
import json
import math
import sys

from themesim import __version__
from themesim.errors import InputError, ThemesimError
from themesim.kinds import DEFAULT_METHODS
from themesim.kinds import get as get_kind

FORMATS = ("json", "csv", "text")


def _json_value(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def _records(table) -> list[dict]:
    return [
        {k: _json_value(v.item() if hasattr(v, "item") else v) for k, v in row.items()}
        for row in table.to_dict(orient="records")
    ]


def _render(table, fmt: str, op: str) -> str:
    from themesim.report.textblock import format_text_block

    if fmt == "json":
        return json.dumps(_records(table), indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        table.to_csv(buf, index=False, lineterminator="\n")
        return buf.getvalue()
    blocks = [format_text_block(dict(r, op=op)) for r in _records(table)]
    return "\n\n".join(blocks) + "\n"


def cmd_score(args) -> int:
    from themesim.metrics.coverage import score
    from themesim.similarity import align_matrix, read_matrix_csv

    S, rows, cols = read_matrix_csv(args.matrix)
    if not (args.families or args.within_a or args.within_b):
        table = score(S, args.threshold, args.op)
    else:
        from themesim.metrics.comparison import Settings, comparison_rows

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
    sys.stdout.write(_render(table, args.format, args.op))
    return 0


def cmd_compare(args) -> int:
    from themesim.io.themes import read_theme_file
    from themesim.metrics.coverage import score
    from themesim.steps.similarity import similarity_for

    usable = sorted(m for m, s in DEFAULT_METHODS.items() if not get_kind(s["kind"]).reads_matrices)
    if args.method not in usable:
        raise InputError(f"--method {args.method}", "is not usable here", f"Use one of {usable}")
    spec = DEFAULT_METHODS[args.method]
    a = read_theme_file(args.a_file, text_template=args.template)
    b = read_theme_file(args.b_file, text_template=args.template)
    S = similarity_for(spec, a, b)
    thresholds = args.threshold or spec["thresholds"]
    table = score(S, thresholds, args.op)
    print(
        f"{a['set'].iloc[0]} (A, {len(a)} themes) vs {b['set'].iloc[0]} (B, {len(b)} themes)"
        f" — method {args.method}"
    )
    sys.stdout.write(_render(table, args.format, args.op))
    return 0


def cmd_verify(args) -> int:
    from themesim.archive.verify import format_verification, verify

    result = verify(args.archive)
    sys.stdout.write(format_verification(args.archive, result, verbose=args.verbose))
    return 0 if result.ok else 1


def cmd_validate(args) -> int:
    from themesim.validate import failures, run_suite

    only = [a for a in args.only.split(",") if a] if args.only else None
    summary = run_suite(args.out, grid=args.grid, seed=args.seed, only=only)
    bad = failures(summary)
    judged = int(summary["passes"].notna().sum())
    print(
        f"validate: {judged - len(bad)} of {judged} checked properties hold; written to {args.out}"
    )
    for r in bad.itertuples():
        print(
            f"  MISSED {r.area} {r.design} {r.quantity} [{r.procedure}] {r.property} "
            f"{r.value:.3f} (nominal {r.nominal:g}, {r.draws} draws)"
        )
    return 1 if len(bad) and args.strict else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="themesim", description=__doc__)
    p.add_argument("--version", action="version", version=f"themesim {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("score", help="every coverage and one-to-one metric of a matrix CSV")
    s.add_argument("matrix", help="CSV: header = B theme names, first column = A theme names")
    s.add_argument(
        "--threshold",
        type=float,
        action="append",
        required=True,
        help="match threshold; repeat for several",
    )
    s.add_argument(
        "--op",
        choices=("ge", "gt"),
        default="ge",
        help="ge: S >= threshold (default); gt: S > threshold",
    )
    s.add_argument("--format", choices=FORMATS, default="json")
    s.add_argument(
        "--families",
        action="store_true",
        help="also gaps and categories, transport, bootstrap intervals and, with --within-a/-b,"
        " within-set baselines",
    )
    s.add_argument("--gamma", type=float, default=0.15, help="distinctiveness gap (--families)")
    s.add_argument("--bootstrap", type=int, default=1000, help="resamples; 0 = no intervals")
    s.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    s.add_argument("--within-a", help="CSV of set A against itself (enables baselines)")
    s.add_argument("--within-b", help="CSV of set B against itself (enables baselines)")
    s.set_defaults(func=cmd_score)

    c = sub.add_parser("compare", help="compare two theme files with one method")
    c.add_argument("a_file", help="theme file of set A (the reference)")
    c.add_argument("b_file", help="theme file of set B")
    c.add_argument("--method", default="minilm", help="minilm (default), mpnet or tfidf")
    c.add_argument(
        "--threshold",
        type=float,
        action="append",
        help="default: the method's threshold (minilm 0.56, mpnet 0.62)",
    )
    c.add_argument("--op", choices=("ge", "gt"), default="ge")
    c.add_argument("--template", default="{name}: {description}", help="text embedded per theme")
    c.add_argument("--format", choices=FORMATS, default="text")
    c.set_defaults(func=cmd_compare)

    v = sub.add_parser(
        "verify",
        help="recheck every checksum of a results archive; exit 0 only when all match",
        description="Recheck every file of a themesim archive (or the folder it was unpacked"
        " to) against its SHA256SUMS: files that differ, are missing, or are not listed are"
        " reported. Exit status 0 when all match, 1 when not, 2 when it is not an archive.",
    )
    v.add_argument("archive", help="results/archive/<study>.zip, or its unpacked folder")
    v.add_argument("--verbose", "-v", action="store_true", help="also list the files that match")
    v.set_defaults(func=cmd_verify)

    val = sub.add_parser(
        "validate",
        help="the validation suite: coverage of every interval, error rates of every test",
        description="Measure, on seeded designs whose true values are known, the coverage and"
        " width of every interval and the type-I error, FDR and power of every test"
        " (docs/validity.md). Writes one CSV per area, summary.csv and summary.png.",
    )
    val.add_argument("--grid", choices=("small", "full"), default="small")
    val.add_argument("--seed", type=int, default=0)
    val.add_argument("--only", help="comma-separated areas (default: all)")
    val.add_argument("--out", default="results/validation", help="output folder")
    val.add_argument(
        "--strict", action="store_true", help="exit 1 when a checked property misses its level"
    )
    val.set_defaults(func=cmd_validate)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ThemesimError as e:
        print(f"themesim: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
