"""The `themesim` command: score a matrix, compare two theme files, measure two coders'
agreement, verify an archive, or run the validation suite."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import pandas as pd

from themesim import __version__
from themesim.archive.verify import format_verification, verify
from themesim.cli_agree import cmd_agree
from themesim.cli_output import FORMATS, records, render
from themesim.cli_sizes import (
    MAX_MINUTES,
    check_cost,
    compare_cost,
    power_cost,
    score_cost,
    score_read_cost,
)
from themesim.coder.build import run_cli
from themesim.errors import InputError, ThemesimError, disk_full, disk_full_error
from themesim.io.themes import read_theme_file
from themesim.kinds import DEFAULT_METHODS
from themesim.kinds import get as get_kind
from themesim.metrics.comparison import Settings, comparison_rows
from themesim.metrics.sets.coverage import score
from themesim.metrics.verdicts.difference import VERDICTS
from themesim.similarity import align_matrix, read_matrix_csv
from themesim.steps.similarity import similarity_for
from themesim.validate import failures, run_suite
from themesim.validate.verdicts import MAX_SEARCH_THEMES, Design, power, smallest


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


def cmd_verify(args) -> int:
    result = verify(args.archive)
    sys.stdout.write(format_verification(args.archive, result, verbose=args.verbose))
    return 0 if result.ok else 1


def cmd_validate(args) -> int:
    only = [a for a in args.only.split(",") if a] if args.only else None
    summary = run_suite(args.out, grid=args.grid, seed=args.seed, only=only)
    bad = failures(summary)
    judged = int(summary["passes"].notna().sum())
    held = judged - len(bad)
    # contains-the-estimate rows hold by construction: counted apart from the others
    contains = summary[(summary["property"] == "contains_estimate") & summary["passes"].notna()]
    c_bad = int((~contains["passes"].astype(bool)).sum())
    print(
        f"validate: {held - (len(contains) - c_bad)} of {judged - len(contains)} checked "
        f"properties hold (coverage and error rates), and {len(contains) - c_bad} "
        f"of {len(contains)} contains-the-estimate rows; written to {args.out}"
    )
    for r in bad.itertuples():
        print(
            f"  MISSED {r.area} {r.design} {r.quantity} [{r.procedure}] {r.property} "
            f"{r.value:.3f} (nominal {r.nominal:g}, {r.draws} draws)"
        )
    return 1 if len(bad) and args.strict else 0


def cmd_train_coder(args) -> int:
    return run_cli(args)


def cmd_power(args) -> int:
    """The study planner: P(each verdict) at one design, by the suite's simulation."""
    least = (("--themes", args.themes, 2), ("--runs", args.runs, 1),
             ("--analysts", args.analysts, 2), ("--draws", args.draws, 10),
             ("--domains", args.domains, 1))  # fmt: skip
    for name, value, low in least:
        if value < low:
            raise InputError(name, f"is {value}, the least is {low}", f"Give {low} or more")
    if args.domains > args.themes:
        raise InputError(
            f"--domains {args.domains}",
            f"is more than the {args.themes} themes: each analyst's themes are dealt to the "
            "domains in turn, so a domain would hold none",
            f"Give at most --themes ({args.themes}) domains, or more themes",
        )
    if not 0 < args.margin < 1:
        raise InputError("--margin", f"{args.margin:g} is out of range", "Give one in (0, 1)")
    if not math.isfinite(args.analyst_sd):
        raise InputError(
            "--analyst-sd", f"{args.analyst_sd:g} is not a number", "Give an SD of 0 or more"
        )
    if args.analyst_sd < 0:
        raise InputError("--analyst-sd", f"{args.analyst_sd:g} is negative", "Give 0 or more")
    if not 0 < args.alpha < 0.5:
        raise InputError("--alpha", f"{args.alpha:g} is out of range", "Give one in (0, 0.5)")
    if not 0 <= args.icc < 1:
        raise InputError("--icc", f"{args.icc:g} is out of range", "Give an ICC in [0, 1)")
    if not 0 < args.agreement < 1:
        raise InputError(
            "--agreement",
            f"{args.agreement:g} must lie strictly between 0 and 1",
            "Give the human-human agreement, e.g. 0.7",
        )
    if not 0 < args.agreement + args.difference < 1:
        raise InputError(
            "--difference",
            f"{args.difference:g} puts the generator's agreement at "
            f"{args.agreement + args.difference:g}, which must lie strictly between 0 and 1",
            f"Give a difference between {-args.agreement:g} and {1 - args.agreement:g}",
        )
    # as a study reads it with margin_from analysts: the test against the analysts' spread
    from_analysts = args.margin_from == "analysts" and args.analysts >= 3
    need, seconds, how = power_cost(
        args.analysts, args.themes, args.runs, args.draws, args.gen_themes
    )
    check_cost(
        f"--analysts {args.analysts} --themes {args.themes} --runs {args.runs} "
        f"--draws {args.draws}",
        f"simulating {args.draws:,} studies",
        need,
        seconds,
        args.max_minutes,
        how,
    )
    d = Design(
        themes=args.themes, runs=args.runs, analysts=args.analysts, p_h=args.agreement,
        diff=args.difference, icc=args.icc, domains=args.domains, groups=args.groups,
        sd_analyst=args.analyst_sd, gen_themes=args.gen_themes or 0,
    )  # fmt: skip
    margin = "analysts" if from_analysts else args.margin
    res = power(d, args.route, args.draws, args.seed, margin=margin, alpha=args.alpha)
    n = res["draws"]
    rows = [
        {"verdict": w, "probability": res[f"p_{w}"],
         "mc_se": math.sqrt(res[f"p_{w}"] * (1 - res[f"p_{w}"]) / n), "draws": n}
        for w in VERDICTS
    ]  # fmt: skip
    table = pd.DataFrame(rows)
    if args.format == "json":
        out = {"design": vars(d) | {"route": args.route, "margin": margin,
                                    "alpha": args.alpha}, "verdicts": records(table)}  # fmt: skip
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    elif args.format == "csv":
        sys.stdout.write(table.to_csv(index=False, lineterminator="\n"))
    else:
        print(
            f"{d.themes} reference themes per analyst, {d.runs} run(s), {d.analysts} analysts; "
            f"human-human {d.p_h:g}, generator {d.p_h + d.diff:g} ({args.route}); "
            + (
                "equivalent: |D| below the analysts' spread (latent SD "
                f"{args.analyst_sd:g}), each study's own"
                if from_analysts
                else f"margin ±{args.margin:g}"
            )
            + f", alpha {args.alpha:g}; {n} simulated studies"
        )
        for r in rows:
            print(f"  P({r['verdict']}) = {r['probability']:.3f} ± {r['mc_se']:.3f}")
    if args.smallest:
        _print_smallest(d, args, margin)
    return 0


def _print_smallest(d, args, margin) -> None:
    """The fewest themes per analyst at which a generator as good as the analysts is called
    equivalent, non-inferior or better in 80 % of studies (validate.verdicts.smallest)."""
    found = smallest(d, args.route, 0.8, args.draws, args.seed, margin=margin, alpha=args.alpha)
    if found is None:
        print(
            f"smallest design: none up to {MAX_SEARCH_THEMES} themes per analyst reaches 0.8 "
            f"for a generator as good as the analysts ({d.runs} run(s), {d.analysts} analysts)"
        )
    else:
        n, p = found
        print(
            f"smallest design: {n} themes per analyst ({d.runs} run(s), {d.analysts} analysts,"
            f" agreement {d.p_h:g}) calls a generator as good as the analysts equivalent, "
            f"non-inferior or better with probability {p:.3f}"
        )


def _max_minutes(parser) -> None:
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=MAX_MINUTES,
        help="refuse, before it starts, work its sizes imply more CPU time for (default"
        " %(default)g; the estimate is in the message)",
    )


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
    _max_minutes(s)
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
    _max_minutes(c)
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

    ag = sub.add_parser(
        "agree",
        help="intercoder agreement of two or more codings of the same transcripts",
        description="Agreement of two or more coders, per code and transcript and overall,"
        " with and without the text no coder coded. At character level: percent agreement,"
        " Cohen's κ (two coders, as NVivo and QualCoder report it) or Fleiss' κ (more),"
        " Gwet's AC1, Brennan-Prediger and Krippendorff's nominal α with every character a"
        " unit (alpha_binary_char). As units: Krippendorff's unitizing α, per code in its"
        " 1995/2004 form (u_alpha_2004) and the 2016 family uα, |uα, cuα and Cuα. Jackknife"
        " intervals over transcripts. Runs no study.",
    )
    ag.add_argument(
        "codings",
        nargs="+",
        help="coded-segments files (CSV, TSV, XLSX: document, code, text, start, end,"
        " optional coder), one per coder or with a coder column, or one REFI-QDA .qdpx whose"
        " codings carry each coder's creatingUser",
    )
    ag.add_argument(
        "--transcripts",
        nargs="+",
        help="transcript files or glob patterns (required for coded-segments files; beside a"
        " .qdpx they are compared with the project's own copies, which are scored)",
    )
    ag.add_argument(
        "--coders",
        help="the coders to compare, A,B[,C...]: a .qdpx's users (names or guids), a coder"
        " column's values, or names for the files in order",
    )
    ag.add_argument("--level", choices=("top", "leaf", "all"), help=".qdpx codes (default all)")
    ag.add_argument(
        "--overlap",
        type=float,
        help="also MAXQDA's segment criterion: a selection agrees when the other coder's"
        " selection of the code covers at least this share of it (e.g. 0.9)",
    )
    ag.add_argument(
        "--allow-unmatched-codes",
        action="store_true",
        help="score a code some coder never used as never applied by that coder",
    )
    ag.add_argument(
        "--similarity",
        metavar="FILE",
        help="agreement across codebooks: a CSV code_a, code_b, similarity (in [0, 1]) between"
        " codes; adds cu_alpha_codebooks, cuα with distance 1 - similarity (docs/metrics.md)."
        " Give every pair, within each codebook too; a pair left out counts as unrelated (0)."
        " Implies --allow-unmatched-codes",
    )
    ag.add_argument("--format", choices=(*FORMATS, "xlsx"), default="text")
    ag.add_argument("--out", help="write here instead of stdout (required for xlsx)")
    ag.add_argument(
        "--export-qdpx",
        metavar="OUT.qdpx",
        help="also write the codings as a REFI-QDA project for QualCoder, ATLAS.ti, MAXQDA or"
        " NVivo: the transcripts, each coder as a user, and where the coders differ as codes"
        " under 'Disagreements (themesim)' (a code set); agree reads it back to the same figures",
    )
    _max_minutes(ag)
    ag.set_defaults(func=cmd_agree)

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

    pw = sub.add_parser(
        "power",
        help="study planner: the chance of each verdict at a design",
        description="The probability of each verdict (better, equivalent, non-inferior,"
        " inconclusive, worse) for a generator against human analysts, by the validation"
        " suite's simulation of the same design (docs/verdicts.md).",
    )
    pw.add_argument("--themes", type=int, default=10, help="reference themes per analyst")
    pw.add_argument("--runs", type=int, default=3, help="runs of the generator")
    pw.add_argument("--analysts", type=int, default=3, help="human analysts (>= 2)")
    pw.add_argument("--agreement", type=float, default=0.7, help="human-human agreement")
    pw.add_argument(
        "--difference", type=float, default=0.0, help="generator minus human-human agreement"
    )
    pw.add_argument("--margin", type=float, default=0.10, help="the margin fixed before the data")
    pw.add_argument(
        "--margin-from",
        choices=("analysts", "convention"),
        default="convention",
        help="as equivalence.margin_from: --margin (default), or, from three analysts on,"
        " the test of the difference against the analysts' own spread",
    )
    pw.add_argument(
        "--gen-themes", type=int, default=None, help="themes per run (default: --themes)"
    )
    pw.add_argument(
        "--analyst-sd",
        type=float,
        default=0.3,
        help="analyst-to-analyst SD on the latent (probit) scale of the suite's designs",
    )
    pw.add_argument("--alpha", type=float, default=0.05)
    pw.add_argument("--route", choices=("strength", "matched"), default="matched")
    pw.add_argument("--icc", type=float, default=0.0, help="domain intraclass correlation")
    pw.add_argument("--domains", type=int, default=4, help="domains the themes fall in")
    pw.add_argument("--groups", action="store_true", help="the domains are declared")
    pw.add_argument("--draws", type=int, default=400, help="simulated studies")
    pw.add_argument("--seed", type=int, default=0)
    pw.add_argument(
        "--smallest",
        action="store_true",
        help="also search the fewest themes per analyst at which a generator as good as the"
        " analysts reaches equivalent, non-inferior or better in 80 %% of studies",
    )
    pw.add_argument(
        "--max-minutes",
        type=float,
        default=MAX_MINUTES,
        help="refuse a design whose simulation is estimated to take more CPU time"
        f" (default {MAX_MINUTES:g})",
    )
    pw.add_argument("--format", choices=FORMATS, default="text")
    pw.set_defaults(func=cmd_power)

    tc = sub.add_parser(
        "train-coder",
        help="train the segment coder's adapter and head on labelled (passage, theme) pairs",
        description="Train, validate (nested by topic) and write the trained coder"
        " (grounding.coder.kind trained) from a folder in the ArgKP layout; the same data give"
        " the same bytes (docs/grounding.md, 'The trained coder').",
    )
    tc.add_argument("--data", required=True, help="folder with arguments_/key_points_/labels_")
    tc.add_argument("--out", default=None, help="output folder (default: the shipped weights)")
    tc.set_defaults(func=cmd_train_coder)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ThemesimError as e:
        print(f"themesim: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        full = disk_full(e)  # a full disk while writing: one line, as a bad input
        if full is None:
            raise
        print(f"themesim: error: {disk_full_error(full)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
