"""The `themesim` command: score a matrix, compare two theme files, measure two coders'
agreement, verify an archive, or run the validation suite."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass

from themesim import __version__
from themesim.cli_output import FORMATS
from themesim.cli_sizes import MAX_MINUTES
from themesim.errors import ThemesimError, disk_full, disk_full_error


def _max_minutes(parser) -> None:
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=MAX_MINUTES,
        help="refuse, before it starts, work its sizes imply more CPU time for (default"
        " %(default)g; the estimate is in the message)",
    )


def _score_arguments(s) -> None:
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


def _compare_arguments(c) -> None:
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


def _verify_arguments(v) -> None:
    v.add_argument("archive", help="results/archive/<study>.zip, or its unpacked folder")
    v.add_argument("--verbose", "-v", action="store_true", help="also list the files that match")


def _agree_arguments(ag) -> None:
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


def _validate_arguments(val) -> None:
    val.add_argument("--grid", choices=("small", "full"), default="small")
    val.add_argument("--seed", type=int, default=0)
    val.add_argument("--only", help="comma-separated areas (default: all)")
    val.add_argument("--out", default="results/validation", help="output folder")
    val.add_argument(
        "--strict", action="store_true", help="exit 1 when a checked property misses its level"
    )


def _power_arguments(pw) -> None:
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


def _train_coder_arguments(tc) -> None:
    tc.add_argument("--data", required=True, help="folder with arguments_/key_points_/labels_")
    tc.add_argument("--out", default=None, help="output folder (default: the shipped weights)")


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, its help, the function that adds its arguments, and its handler
    as "module:function", imported only when the command runs (so `themesim --help` or a light
    command does not load pandas, scipy and the metrics every other command needs)."""

    name: str
    handler: str
    arguments: Callable[[argparse.ArgumentParser], None]
    help: str
    description: str | None = None


COMMANDS = (
    Command(
        "score",
        "themesim.cli_score:cmd_score",
        _score_arguments,
        "every coverage and one-to-one metric of a matrix CSV",
    ),
    Command(
        "compare",
        "themesim.cli_compare:cmd_compare",
        _compare_arguments,
        "compare two theme files with one method",
    ),
    Command(
        "verify",
        "themesim.cli_verify:cmd_verify",
        _verify_arguments,
        "recheck every checksum of a results archive; exit 0 only when all match",
        "Recheck every file of a themesim archive (or the folder it was unpacked to) against"
        " its SHA256SUMS: files that differ, are missing, or are not listed are reported. Exit"
        " status 0 when all match, 1 when not, 2 when it is not an archive.",
    ),
    Command(
        "agree",
        "themesim.cli_agree:cmd_agree",
        _agree_arguments,
        "intercoder agreement of two or more codings of the same transcripts",
        "Agreement of two or more coders, per code and transcript and overall, with and"
        " without the text no coder coded. At character level: percent agreement, Cohen's κ"
        " (two coders, as NVivo and QualCoder report it) or Fleiss' κ (more), Gwet's AC1,"
        " Brennan-Prediger and Krippendorff's nominal α with every character a unit"
        " (alpha_binary_char). As units: Krippendorff's unitizing α, per code in its 1995/2004"
        " form (u_alpha_2004) and the 2016 family uα, |uα, cuα and Cuα. Jackknife intervals"
        " over transcripts. Runs no study.",
    ),
    Command(
        "validate",
        "themesim.cli_validate:cmd_validate",
        _validate_arguments,
        "the validation suite: coverage of every interval, error rates of every test",
        "Measure, on seeded designs whose true values are known, the coverage and width of"
        " every interval and the type-I error, FDR and power of every test"
        " (docs/validity.md). Writes one CSV per area, summary.csv and summary.png.",
    ),
    Command(
        "power",
        "themesim.cli_power:cmd_power",
        _power_arguments,
        "study planner: the chance of each verdict at a design",
        "The probability of each verdict (better, equivalent, non-inferior, inconclusive,"
        " worse) for a generator against human analysts, by the validation suite's simulation"
        " of the same design (docs/verdicts.md).",
    ),
    Command(
        "train-coder",
        "themesim.coder.build:run_cli",
        _train_coder_arguments,
        "train the segment coder's adapter and head on labelled (passage, theme) pairs",
        "Train, validate (nested by topic) and write the trained coder (grounding.coder.kind"
        " trained) from a folder in the ArgKP layout; the same data give the same bytes"
        " (docs/grounding.md, 'The trained coder').",
    ),
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="themesim", description=__doc__)
    p.add_argument("--version", action="version", version=f"themesim {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for c in COMMANDS:
        c.arguments(sub.add_parser(c.name, help=c.help, description=c.description))
    return p


def handler(name: str) -> Callable[[argparse.Namespace], int]:
    """The function that runs subcommand `name`, its module imported now."""
    module, function = next(c.handler for c in COMMANDS if c.name == name).split(":")
    return getattr(importlib.import_module(module), function)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    run = handler(args.command)
    try:
        return run(args)
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
