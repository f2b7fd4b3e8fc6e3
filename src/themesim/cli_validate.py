"""`themesim validate`: the validation suite, and a line per checked property it misses."""

from __future__ import annotations

from themesim.validate import failures, run_suite


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
