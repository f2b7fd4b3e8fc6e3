# Included for a study with an LLM judge method: before any job runs (and in a dry run) each
# judge method's judgements to ask, those cached and the expected time; a method above its
# max_pairs stops the workflow here (themesim.inputs.judge).
from themesim.inputs.judge import plans as judge_plans

if workflow.is_main_process:
    for line in exit_on_error(judge_plans, SETUP):
        logger.info(line)
