# The paraphrase ceiling (config ceiling:, docs/metrics.md): off unless ceiling.active.


rule paraphrase_reference:
    input:
        themes=embed.themes(SETUP, [STUDY.reference])[0],
    output:
        paths.PARAPHRASES,
    log:
        "logs/ceiling/paraphrases.log",
    threads: 2
    resources:
        llm_server=llm_server_for(ceiling.paraphrase_settings(SETUP)),
    params:
        code=code("paraphrase.py"),
        settings=ceiling.paraphrase_settings(SETUP),
        cache=paths.CACHES["paraphrase"],
    script:
        "../../scripts/paraphrase.py"


rule ceiling_similarity:
    input:
        paraphrases=paths.PARAPHRASES,
        embeddings=lambda wc: embed.files(SETUP, wc.method, [STUDY.reference]),
    output:
        paths.CEILING,
    log:
        "logs/ceiling/{method}.log",
    wildcard_constraints:
        method=regex_of(m for m in STUDY.methods if ceiling.has_ceiling(SETUP, m)),
    threads: 2
    params:
        code=code("ceiling.py"),
        kind=lambda wc: methods.kind(SETUP, wc.method),
        spec=lambda wc: ceiling.spec(SETUP, wc.method),
        cache=embed.cache(SETUP),
    script:
        "../../scripts/ceiling.py"
