"""`themesim power`, the study planner: the chance of each verdict at a design, by the
validation suite's simulation (validate.verdicts)."""

from __future__ import annotations

import json
import math
import sys

import pandas as pd

from themesim.cli_output import records
from themesim.cli_sizes import check_cost, power_cost
from themesim.errors import InputError
from themesim.metrics.verdicts.difference import VERDICTS
from themesim.validate.verdicts import MAX_SEARCH_THEMES, Design, power, smallest


def cmd_power(args) -> int:
    """The study planner: P(each verdict) at one design, by the suite's simulation."""
    _check_design(args)
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
    _write_power(d, args, margin, res)
    if args.smallest:
        _print_smallest(d, args, margin)
    return 0


def _check_design(args) -> None:
    """Each of the design's numbers in its range, or an InputError naming the flag."""
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


def _write_power(d: Design, args, margin, res: dict) -> None:
    """Each verdict's probability and its Monte Carlo SE, as --format asks."""
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
                if margin == "analysts"
                else f"margin ±{args.margin:g}"
            )
            + f", alpha {args.alpha:g}; {n} simulated studies"
        )
        for r in rows:
            print(f"  P({r['verdict']}) = {r['probability']:.3f} ± {r['mc_se']:.3f}")


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
