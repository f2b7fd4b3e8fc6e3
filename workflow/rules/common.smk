import os
from pathlib import Path

from themesim.config import prepare
from themesim.deps import CodeDeps
from themesim.errors import exit_on_error
from themesim import paths
from themesim.inputs import Report, Setup, pair_names, regex_of
from themesim.inputs import (
    calibration,
    ceiling,
    embed,
    grounding,
    methods,
    metrics,
    outputs,
    plots,
    similarity,
    summary,
)
from themesim.provenance import git_commit

STUDY = exit_on_error(prepare, config)  # one line, no Snakemake stack
for note in STUDY.notes:
    logger.info(note)
SETUP = Setup(STUDY, config)  # what every input function of themesim.inputs reads
CODE_VERSION = git_commit(workflow.basedir)  # recorded in the report
# Kept between runs in the working directory, recomputed when a package file changes.
CODE_DEPS = CodeDeps(
    Path(workflow.basedir) / "scripts",
    Path(workflow.basedir) / "src" / "themesim",
    ".snakemake/themesim/code-deps.json",
)


# Jobs that may start a local llama.cpp server (the judge's similarity and calibration, theme
# generation, paraphrases) hold one llm_server each. The workflow profile (profiles/default)
# provides one: one server (and model in memory) at a time, unless `--resources` says
# otherwise. Local scope: each cluster job has its own node, so a cluster run does not
# serialise them.
resource_scopes:
    llm_server="local",


# {method} is a method of the study: a path inside a rule's folder output (a pair file in
# results/similarity/<method>/) matches no rule, rather than one with a method "<m>/<file>".
wildcard_constraints:
    set=r"[A-Za-z0-9][A-Za-z0-9_.@-]*",
    method=regex_of(STUDY.methods),


def code(script):
    """A digest of the package files a rule's script runs, derived from its imports
    (themesim.deps): Snakemake cannot see an edit to an imported module, so it is a param of
    the rule (a param change reruns the job; the log's inputs stay the data it reads).
    """
    return CODE_DEPS.digest(script)


def reported(entries):
    """Paths as they are; themesim.inputs.Report entries wrapped for `snakemake --report`."""
    # Imported under another name: a line may not start with Snakemake's `report` keyword.
    from snakemake.io import report as in_report

    return [
        (
            in_report(
                e.path,
                caption=f"../report/{e.caption}",
                category=e.category,
                subcategory=e.subcategory,
            )
            if isinstance(e, Report)
            else e
        )
        for e in entries
    ]


# ---------------------------------------------------------------- resources


def given_cores():
    """The cores Snakemake was given (--cores), else this machine's CPUs."""
    try:
        cores = workflow.cores
    except Exception:  # no --cores (--unlock, --report, a cluster executor)
        cores = None
    if isinstance(cores, int) and 0 < cores < 1 << 16:
        return cores
    return os.cpu_count() or 1


def embed_threads():
    """An embedding job claims every core Snakemake was given, so nothing runs beside it;
    torch uses at most the CPUs the process may use (themesim.embed.device.set_threads):
    --cores 8 on a 2-core machine runs one job with 2 threads, not four."""
    return given_cores()


def report_threads():
    """Half the cores: the report's figures are drawn that many at a time, and the other
    half stays free for the method's plots and heatmap jobs, which become ready with it
    (on 2 cores one runs beside it: a 12 x 12 study's warm rerun is 1 s shorter than
    with 2)."""
    return max(1, given_cores() // 2)


def method_gpus(method):
    """GPUs an embedding job asks a cluster for: one when the method runs on cuda."""
    return int(str(STUDY.methods[method].get("device") or "cpu").startswith("cuda"))


def embed_mem_mb(method):
    """Host memory of an embedding job; a GPU model (sentence-T5-xxl: 4.9e9 parameters,
    9.7 GB in float16) passes its weights through host memory while loading."""
    return 32000 if method_gpus(method) else 4000


def calibration_mem_mb(method):
    """An embedding model or the local judge model is loaded, as in their own jobs."""
    k = methods.kind_of(SETUP, method)
    if not k.reads_embeddings:
        return 4000
    return embed_mem_mb(k.embeddings_of(method, STUDY.methods[method]))


def llm_server_of(method):
    """1 when a method's similarity or calibration job may start a local LLM server."""
    return int(methods.kind_of(SETUP, method).starts_llm_server(STUDY.methods[method]))


def llm_server_for(settings):
    """1 when LLM calls with these settings (generation, paraphrases) start a local server."""
    return int(settings.get("base_url") is None)
