# LLM theme generation (generate_themes, off unless active): one job writes every run, so one
# local server serves all of them and each chunk's prompt is evaluated once for every seed.
if STUDY.generated:

    rule generate_themes:
        input:
            job_input(jobs.generate_themes),
        output:
            runs=outputs.generated_files(SETUP),
        log:
            "logs/generate/themes.log",
        threads: 2
        resources:
            mem_mb=4000,
            llm_server=llm_server_for(STUDY.generate),
        params:
            code=code("generate_themes.py"),
            job=job_param(jobs.generate_themes),
        script:
            "../../scripts/generate_themes.py"
