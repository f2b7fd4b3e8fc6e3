# themesim: how well sets of qualitative themes agree, per method, never averaged.
# Table of contents only; helpers live in workflow/rules/common.smk.
import copy
from pathlib import Path

from snakemake.logging import logger
from snakemake.utils import min_version
from themesim.schema import check_schema, coerce_cli_values
from themesim.errors import exit_on_error
from themesim.io.yaml_keys import check_config_files

min_version("9.0")

# Until the configfile directive, `config` holds what the command line gave (--configfile
# files, then --config on top): keep it to tell those values from the workflow's file.
CLI_CONFIG = copy.deepcopy(config)


CONFIG_FILE = "config/config.yaml"


configfile: CONFIG_FILE


# A key given twice in the config file: Snakemake's YAML keeps the last; refused, both lines.
exit_on_error(check_config_files, [CONFIG_FILE])

SCHEMA = Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
# --config passes nested numbers as text: read them as the schema wants, and say so.
for note in coerce_cli_values(config, CLI_CONFIG, SCHEMA):
    logger.info(note)
# One check against the schema: one line naming the key (typos get a "did you mean"), and
# the schema's defaults filled in, in the same pass.
exit_on_error(check_schema, config, SCHEMA, CLI_CONFIG, defaults=True)


include: "workflow/rules/common.smk"
include: "workflow/rules/ingest.smk"
include: "workflow/rules/generate.smk"
include: "workflow/rules/embed.smk"
include: "workflow/rules/similarity.smk"


if STUDY.methods_with("judge_cache"):

    include: "workflow/rules/judge_plan.smk"


include: "workflow/rules/metrics.smk"
include: "workflow/rules/ceiling.smk"
include: "workflow/rules/calibration.smk"
include: "workflow/rules/grounding.smk"
include: "workflow/rules/plots.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/archive.smk"
include: "workflow/rules/qdpx.smk"


rule all:
    default_target: True
    input:
        outputs.final_outputs(SETUP),
