from themesim.steps.runner import run_job
from themesim.steps.segment_labels import method_segment_labels

run_job(snakemake, method_segment_labels)  # noqa: F821 (injected by Snakemake)
