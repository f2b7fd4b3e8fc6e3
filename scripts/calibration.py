from themesim.steps.calibration import calibration_tables
from themesim.steps.runner import run_job

run_job(snakemake, calibration_tables)  # noqa: F821 (injected by Snakemake)
