"""The archive rule (`snakemake archive`): a finished study as one zip for a paper."""

from __future__ import annotations

from themesim.archive.build import ArchiveSpec, build_archive
from themesim.steps.job import Job


def archive(job: Job) -> None:
    """results/archive/<study>.zip (inputs.jobs.archive): its inputs, config, results, the
    workflow's own files by name, environment and checksums (themesim.archive.build)."""
    i, p = job.input, job.params
    spec = ArchiveSpec(
        config=dict(p["config"]),
        study=dict(p["study"]),
        sets=dict(i["theme_files"]),
        transcripts=list(i["transcripts"]),
        coded=dict(i["coded"]),
        precomputed={m: list(f) for m, f in i["precomputed"].items()},
        results=list(i["results"]),
        judge_cache=p["judge_cache"],
        caches=list(p["caches"]),
        code=dict(i["code"]),
        code_version=p["code_version"],
        confidential=bool(p["confidential"]),
        authors=list(p["authors"]),
    )
    build_archive(job.output["zip"], spec)
