# The paraphrase ceiling (config ceiling:, docs/metrics.md): defined only when some method of
# the study has one (ceiling.active).
if ceiling.paraphrase_files(SETUP):

    rule paraphrase_reference:
        input:
            job_input(jobs.paraphrase_reference),
        output:
            paraphrases=paths.PARAPHRASES,
        log:
            "logs/ceiling/paraphrases.log",
        threads: 2
        resources:
            llm_server=llm_server_for(ceiling.paraphrase_settings(SETUP)),
        params:
            code=code("paraphrase.py"),
            job=job_param(jobs.paraphrase_reference),
        script:
            "../../scripts/paraphrase.py"

    rule ceiling_similarity:
        input:
            job_input(jobs.ceiling_similarity),
        output:
            similarity=paths.CEILING,
        log:
            "logs/ceiling/{method}.log",
        wildcard_constraints:
            method=regex_of(m for m in STUDY.methods if ceiling.has_ceiling(SETUP, m)),
        threads: 2
        params:
            code=code("ceiling.py"),
            job=job_param(jobs.ceiling_similarity),
        script:
            "../../scripts/ceiling.py"
