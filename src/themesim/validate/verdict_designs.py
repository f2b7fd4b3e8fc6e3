"""The named designs of the verdicts area (validate/verdict_suite.py): the probit model's
grids (validate/verdicts.py; the designs written after each change to an earlier procedure,
AFTER ... AFTER_GROUP_BOUND, are kept as further designs), its set-size designs, the ideas
model's designs (validate/verdict_ideas.py), the differences every design is run at, and the
segments route's designs. Every design here was written before the rarefied agreement and
its interval (metrics/verdicts/rarefied.py, metrics/verdicts/difference.py) were run on any
of them. The validation grid's rows and seeds follow these values and their order.
"""

from __future__ import annotations

from themesim.validate.verdict_ideas import IdeaDesign
from themesim.validate.verdict_segments import SegmentDesign
from themesim.validate.verdicts import MARGIN, POWER_DIFF, Design

# The probit model's grids.
GRIDS = {
    "small": {
        "designs": [
            Design(themes=10, runs=3, analysts=3, p_h=0.7),
            Design(themes=8, runs=1, analysts=2, p_h=0.8),
            Design(themes=15, runs=5, analysts=4, p_h=0.6, icc=0.16),
            Design(themes=12, runs=3, analysts=3, p_h=0.7, icc=0.64, groups=True),
        ],
        "draws": 300,
    },
    "full": {
        "designs": [
            Design(themes=n, runs=r, analysts=k, p_h=p, icc=icc, groups=g)
            for n in (8, 10, 15)
            for r in (1, 3, 5)
            for k in (2, 3, 4)
            for p in (0.6, 0.8)
            for icc, g in ((0.0, False), (0.16, False), (0.16, True), (0.64, True))
        ],
        "draws": 400,
    },
}
# Further probit designs: other variance parts, sizes and domain counts than the grid's.
AFTER = [
    Design(themes=12, runs=2, analysts=3, p_h=0.65, sd_theme=1.2, sd_run=0.6, sd_analyst=0.5),
    Design(themes=9, runs=4, analysts=5, p_h=0.75, sd_run=0.1, sd_analyst=0.6, sd_reference=0.6),
    Design(themes=14, runs=3, analysts=3, p_h=0.5, icc=0.3, domains=3, sd_run=0.5),
    Design(themes=11, runs=5, analysts=4, p_h=0.7, icc=0.5, domains=5, groups=True),
    Design(themes=20, runs=1, analysts=3, p_h=0.85, sd_theme=0.5, sd_analyst=0.2),
    Design(themes=8, runs=2, analysts=2, p_h=0.6, sd_run=0.8),
]
# One run against two analysts with declared groups.
AFTER_GROUPS = [
    Design(themes=12, runs=1, analysts=2, p_h=0.75, icc=0.3, domains=3, groups=True),
    Design(themes=9, runs=1, analysts=2, p_h=0.85, icc=0.5, domains=5, groups=True),
    Design(
        themes=14, runs=1, analysts=2, p_h=0.65, icc=0.16, domains=6, groups=True, sd_theme=1.0
    ),  # fmt: skip
    Design(themes=10, runs=1, analysts=2, p_h=0.7, icc=0.64, domains=2, groups=True),
]
# Three analysts and two or three runs with 6-8 declared groups.
AFTER_GROUPS += [
    Design(themes=15, runs=3, analysts=3, p_h=0.8, icc=0.5, domains=7, groups=True),
    Design(themes=12, runs=1, analysts=3, p_h=0.85, icc=0.64, domains=6, groups=True),
    Design(themes=13, runs=2, analysts=2, p_h=0.6, icc=0.16, domains=8, groups=True),
]
# One set against two analysts without groups.
AFTER_POOLED = [
    Design(themes=9, runs=1, analysts=2, p_h=0.75),
    Design(themes=14, runs=1, analysts=2, p_h=0.55, sd_theme=1.1, sd_reference=0.5),
    Design(themes=12, runs=1, analysts=2, p_h=0.85, icc=0.3, domains=3),
]
# Two runs with small to large spreads, and three runs with a large one (the fewest the
# run part is read from).
AFTER_RUNS = [
    Design(themes=10, runs=2, analysts=3, p_h=0.7, sd_run=0.6),
    Design(themes=14, runs=2, analysts=2, p_h=0.75, icc=0.16, sd_run=1.0),
    Design(themes=9, runs=2, analysts=4, p_h=0.55, sd_theme=1.1, sd_run=0.4),
    Design(themes=12, runs=3, analysts=2, p_h=0.65, sd_run=0.8),
]
# Large run and analyst spreads at 3-5 runs and 3-4 analysts, and the ceiling.
AFTER_COMBINE = [
    Design(themes=11, runs=4, analysts=3, p_h=0.75, sd_run=0.9),
    Design(themes=13, runs=3, analysts=4, p_h=0.6, icc=0.16, sd_analyst=0.7),
    Design(themes=8, runs=5, analysts=2, p_h=0.8, sd_theme=1.0, sd_run=0.6),
    Design(themes=15, runs=3, analysts=3, p_h=0.85, sd_run=0.5, sd_analyst=0.5),
]
# Floors and ceilings with runs, analysts, declared groups and wide theme spreads.
AFTER_BOUNDED = [
    Design(themes=10, runs=3, analysts=3, p_h=0.2),
    Design(themes=13, runs=5, analysts=2, p_h=0.88),
    Design(themes=8, runs=1, analysts=4, p_h=0.87, icc=0.16),
    Design(themes=15, runs=2, analysts=3, p_h=0.8, icc=0.3, domains=5, groups=True, sd_theme=0.5),
    Design(themes=11, runs=3, analysts=4, p_h=0.15, sd_analyst=0.6),
    Design(themes=9, runs=1, analysts=2, p_h=0.9, sd_theme=1.2),
]
# Analyst and reference spreads from none to large, at 3-4 analysts.
AFTER_ANALYSTS = [
    Design(themes=9, runs=3, analysts=3, p_h=0.7, sd_theme=1.1, sd_analyst=0.1, sd_reference=0.1),
    Design(themes=12, runs=1, analysts=4, p_h=0.6, sd_analyst=0.05, sd_reference=0.6),
    Design(themes=8, runs=4, analysts=3, p_h=0.8, sd_analyst=0.1, sd_reference=0.7),
    Design(themes=14, runs=2, analysts=4, p_h=0.55, icc=0.3, sd_analyst=0.2, sd_reference=0.05),
    Design(themes=12, runs=5, analysts=3, p_h=0.75, icc=0.16, domains=6, groups=True,
           sd_reference=0.5),
    Design(themes=15, runs=3, analysts=4, p_h=0.65, sd_analyst=0.5, sd_reference=0.0),
]  # fmt: skip
# Agreements within 0.15 of a bound, two analysts mostly, other sizes and spreads.
AFTER_CEILING = [
    Design(themes=11, runs=2, analysts=2, p_h=0.9, sd_theme=0.6),
    Design(themes=14, runs=4, analysts=2, p_h=0.93, icc=0.16),
    Design(themes=8, runs=3, analysts=2, p_h=0.86, sd_run=0.5),
    Design(themes=12, runs=1, analysts=2, p_h=0.1),
    Design(themes=15, runs=5, analysts=2, p_h=0.95, icc=0.3, domains=5, groups=True),
    Design(themes=9, runs=2, analysts=3, p_h=0.92),
    Design(themes=10, runs=4, analysts=4, p_h=0.89, sd_theme=1.1),
    Design(themes=13, runs=1, analysts=2, p_h=0.84, sd_theme=1.2),
]
# Shares that can reach 0 or 1 at 2-4 analysts.
AFTER_FLOOR = [
    Design(themes=8, runs=2, analysts=2, p_h=0.92),
    Design(themes=10, runs=3, analysts=3, p_h=0.94, sd_theme=0.5),
    Design(themes=12, runs=4, analysts=2, p_h=0.08),
    Design(themes=9, runs=5, analysts=4, p_h=0.9, icc=0.16),
    Design(themes=14, runs=2, analysts=2, p_h=0.87, sd_theme=1.0, sd_run=0.6),
    Design(themes=15, runs=3, analysts=2, p_h=0.91, icc=0.3, domains=5, groups=True),
]
# 3-5 analysts, 6-10 declared groups, ICC 0.3-0.8, floors to ceilings.
AFTER_NESTED = [
    Design(themes=10, runs=3, analysts=3, p_h=0.7, icc=0.64, domains=6, groups=True),
    Design(themes=14, runs=4, analysts=4, p_h=0.5, icc=0.64, domains=9, groups=True, sd_theme=0.6),
    Design(themes=9, runs=1, analysts=3, p_h=0.45, icc=0.5, domains=6, groups=True),
    Design(themes=12, runs=5, analysts=4, p_h=0.8, icc=0.4, domains=7, groups=True,
           sd_reference=0.5),
    Design(themes=15, runs=2, analysts=3, p_h=0.35, icc=0.64, domains=10, groups=True,
           sd_theme=1.1),
    Design(themes=11, runs=3, analysts=5, p_h=0.6, icc=0.3, domains=6, groups=True,
           sd_analyst=0.5),
    Design(themes=8, runs=4, analysts=3, p_h=0.75, icc=0.8, domains=8, groups=True),
]  # fmt: skip
# Declared groups at 3-5 analysts near both bounds and between, 6-9 groups.
AFTER_GROUP_BOUND = [
    Design(themes=12, runs=3, analysts=3, p_h=0.9, icc=0.5, domains=6, groups=True),
    Design(themes=9, runs=2, analysts=4, p_h=0.86, icc=0.64, domains=7, groups=True,
           sd_theme=1.0),
    Design(themes=15, runs=1, analysts=3, p_h=0.12, icc=0.64, domains=8, groups=True),
    Design(themes=10, runs=5, analysts=3, p_h=0.93, icc=0.3, domains=6, groups=True,
           sd_theme=0.6),
    Design(themes=13, runs=4, analysts=4, p_h=0.2, icc=0.5, domains=9, groups=True, sd_run=0.5),
    Design(themes=11, runs=3, analysts=5, p_h=0.8, icc=0.64, domains=7, groups=True),
]  # fmt: skip
GRIDS["full"]["designs"] += AFTER + AFTER_GROUPS + AFTER_POOLED + AFTER_RUNS + AFTER_COMBINE
GRIDS["full"]["designs"] += AFTER_BOUNDED + AFTER_ANALYSTS + AFTER_CEILING + AFTER_FLOOR
GRIDS["full"]["designs"] += AFTER_NESTED + AFTER_GROUP_BOUND
# Set sizes: the same generator writing fewer or more themes than the analysts (10 to 12
# each), from 6 to 20, at the analysts' agreement a size design can reach (a shared idea's
# evidence p_h times the largest set over the analysts' must stay below 1).
SIZES = [
    Design(themes=10, runs=3, analysts=3, p_h=0.5, gen_themes=m) for m in (6, 16)
] + [
    Design(themes=10, runs=1, analysts=2, p_h=0.55, gen_themes=m) for m in (6, 16)
] + [
    Design(themes=12, runs=5, analysts=4, p_h=0.45, icc=0.16, gen_themes=m) for m in (8, 20)
] + [
    Design(themes=10, runs=2, analysts=3, p_h=0.4, icc=0.3, domains=5, groups=True,
           gen_themes=m) for m in (7, 18)
]  # fmt: skip
# the quick grid (tests): the power design, a small ceiling design and the size question
GRIDS["small"] = {"designs": [GRIDS["small"]["designs"][0], GRIDS["small"]["designs"][1],
                              *SIZES[:2]], "draws": 100}  # fmt: skip
GRIDS["full"]["designs"] += SIZES
# The ideas model: the size question at its target (analysts of 10; the generator at 6, 10
# and 16), then runs, analysts, pools, salience, declared domains and set sizes 6-20.
IDEAS = (
    [IdeaDesign(themes=10, runs=3, analysts=3, gen_themes=m) for m in (6, 10, 16)]
    + [IdeaDesign(themes=10, runs=1, analysts=2, gen_themes=m) for m in (6, 10, 16)]
    + [IdeaDesign(themes=12, runs=5, analysts=4, salience_sd=0.5, gen_themes=m) for m in (8, 20)]
    + [
        IdeaDesign(themes=8, runs=1, analysts=2, ideas=20),
        IdeaDesign(themes=15, runs=3, analysts=3, ideas=40, groups=True),
        IdeaDesign(themes=12, runs=2, analysts=4, salience_sd=1.5),
        IdeaDesign(themes=20, runs=3, analysts=3, ideas=50, gen_themes=14),
        IdeaDesign(themes=6, runs=5, analysts=3, ideas=15),
        IdeaDesign(themes=10, runs=3, analysts=5, writer_sd=0.5),
        IdeaDesign(themes=14, runs=1, analysts=3, noise=0.8, groups=True, domains=6),
        IdeaDesign(themes=10, runs=4, analysts=2, run_sd=0.4, domain_share=0.5),
    ]
)
IDEA_GRIDS = {"small": {"designs": [IDEAS[1]], "draws": 100, "truth_draws": 200},
              "full": {"designs": IDEAS, "draws": 1000, "truth_draws": 2000}}  # fmt: skip
# Differences per design: the margins (errors of equivalent, non-inferior), 0 (errors of
# better and worse), and the power point.
DIFFERENCES = (-MARGIN, 0.0, MARGIN, POWER_DIFF)


# Written before the segments route was run on any of them: serial dependence from none to
# strong topic blocks, 6-30 transcripts, one and three runs, two and three analysts; the
# nulls with analyst-to-analyst spread only where three analysts let the interval carry it.
SEGMENT_DESIGNS = [
    SegmentDesign(transcripts=t, runs=r, analysts=k, stay=st, sd_coder=sc)
    for t in (6, 12, 30)
    for st in (0.0, 0.5, 0.9)
    for r, k, sc in ((1, 2, 0.0), (3, 3, 0.0), (3, 3, 0.4))
]
SEGMENT_POWER = [
    SegmentDesign(transcripts=t, runs=3, analysts=3, stay=0.5, shift=-1.0) for t in (6, 12, 30)
]
SEGMENT_GRIDS = {
    "small": [SEGMENT_DESIGNS[6], SEGMENT_DESIGNS[14], SEGMENT_POWER[1]],
    "full": SEGMENT_DESIGNS + SEGMENT_POWER,
}
