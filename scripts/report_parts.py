from themesim.steps.plots import MethodTables, method_figure, side_by_side
from themesim.steps.report import beside_tables, headline_tables, tables_workbook
from themesim.steps.runner import run_all

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
methods = list(p.methods)
comparisons = dict(zip(methods, sm.input.comparisons, strict=True))
theme_tables = dict(zip(methods, sm.input.themes_tables, strict=True))
theme_parquets = dict(zip(p.sets, sm.input.themes, strict=True))
thresholds = dict(zip(methods, sm.input.thresholds, strict=True))
sweeps = dict(zip(methods, sm.input.sweeps, strict=True))

headline = dict(
    methods=methods,
    comparisons=[comparisons[m] for m in methods],
    ran_on={m: list(r) for m, r in dict(p.ran_on).items()},
    out_csv=p.headline["csv"],
    out_tex=p.headline["tex"],
    out_png=p.headline["png"],
    out_svg=p.headline["svg"],
    reference=p.reference,
    max_panels=p.max_panels,
    verdicts=sm.input.verdicts,
    reference_group=list(p.reference_group),
    equivalence=dict(p.equivalence),
)
tasks = [
    # The workbook after the headline and verdicts: they are the workbook's first sheets.
    [
        (headline_tables, headline),
        (
            tables_workbook,
            dict(
                tables=dict(p.tables),
                out=sm.output.workbook,
                # sets_themes.csv and the grounding tables, written by the same jobs
                extra=beside_tables(
                    dict(p.tables),
                    dict(zip(p.grounded, sm.input.grounding_pairs, strict=True)),
                    dict(zip(p.calibrated, sm.input.calibration_fits, strict=True)),
                ),
                named=dict(p.named),
            ),
        ),
    ],
    (
        side_by_side,
        dict(
            methods=methods,
            sweeps=list(sm.input.sweeps),
            thresholds=list(sm.input.thresholds),
            out_png=p.side_by_side["png"],
            out_svg=p.side_by_side["svg"],
            reference=p.reference,
            max_panels=p.max_panels,
        ),
    ),
]
# Each method's figures of report/figures.py, each drawn by the function its entry names.
for m in methods:
    v = p.vectors.get(m, {})
    embeddings = list(v.get("embeddings", []))
    tables = MethodTables(
        method=m,
        themes_csv=theme_tables[m],
        sweep_csv=sweeps[m],
        thresholds_csv=thresholds[m],
        gamma=float(p.gamma[m]),
        reference=p.reference,
        max_panels=p.max_panels,
        kind=v.get("kind"),
        d=v.get("d"),
        set_files=theme_parquets,
        embeddings=dict(zip(p.sets, embeddings, strict=True)) if embeddings else {},
    )
    for stem, out in p.figures[m].items():
        tasks.append(
            (method_figure, dict(stem=stem, tables=tables, out_png=out["png"], out_svg=out["svg"]))
        )
run_all(sm.log[0], tasks, workers=sm.threads)
