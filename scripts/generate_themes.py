from themesim.steps.generate import generate_theme_runs
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
runs = dict(sm.params.runs)  # run name -> seed, in output order
run(
    sm.log[0],
    generate_theme_runs,
    sm.input.segments,
    outputs=dict(zip(runs, sm.output, strict=True)),
    seeds=runs,
    settings=dict(sm.params.settings),
    cache=sm.params.cache,
    threads=sm.threads,
)
