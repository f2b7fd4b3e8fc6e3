# LLM theme generation (generate_themes, off unless active): one job writes every run, so one
# local server serves all of them and each chunk's prompt is evaluated once for every seed.
if STUDY.generated:

    rule generate_themes:
        input:
            segments=paths.SEGMENTS,
            prompts=outputs.generate_prompt_files(SETUP),
        output:
            outputs.generated_files(SETUP),
        log:
            "logs/generate/themes.log",
        threads: 2
        resources:
            mem_mb=4000,
            llm_server=llm_server_for(STUDY.generate),
        params:
            code=code("generate_themes.py"),
            runs=STUDY.generated,
            settings=STUDY.generate,
            # An accumulating cache, not an output: a failed job must never delete it.
            cache=paths.CACHES["generate"],
        script:
            "../../scripts/generate_themes.py"
