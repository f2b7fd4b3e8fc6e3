from themesim.steps.ingest import ingest_themes
from themesim.steps.runner import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
run(
    sm.log[0],
    ingest_themes,
    sm.input.src,
    sm.output[0],
    set_name=sm.wildcards.set,
    template=sm.params.template,
    level=sm.params.get("level", "all"),
    within=bool(sm.params.get("within", False)),
)
