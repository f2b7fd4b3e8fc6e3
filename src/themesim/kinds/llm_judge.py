"""llm_judge: an LLM's score of conceptual overlap for every pair of themes."""

from __future__ import annotations

import logging
from dataclasses import asdict, replace

from themesim.defaults import kind_defaults
from themesim.errors import StepError
from themesim.kinds.base import COMMON_KEYS, Kind
from themesim.llm.judge import JudgeError, judge_matrix, judge_pairs, keyed_settings, plan
from themesim.llm.judge_settings import JudgeSettings
from themesim.llm.server import LlamaServer, packaged_model_name, packaged_model_path

log = logging.getLogger("themesim")

# The settings that reach the judge (themesim.llm.judge_settings.JudgeSettings): the kind's keys in
# the schema beyond those of every method.
JUDGE_KEYS = tuple(k for k in kind_defaults("llm_judge") if k not in COMMON_KEYS)


class LlmJudge(Kind):
    name = "llm_judge"
    builtins = {
        "judge": {
            "active": False,
            "description": "LLM judge of conceptual overlap (local llama.cpp server by default)",
        }
    }
    threshold_range = (0.0, 1.0)
    score_name = "judge"
    keys = frozenset(JUDGE_KEYS)
    similarity_keys = JUDGE_KEYS
    similarity_rule = "similarity_judge"
    # The big job: it starts first and claims its cores (a local server answers 2 at a time).
    similarity_job = {"threads": 2, "priority": 1, "resources": {"mem_mb": 4000}}
    # n_a * n_b calls per comparison; within-set would add n^2 more
    within_set_matrices = False
    judge_cache = True
    calibrates = True

    def starts_llm_server(self, spec):
        return spec.get("base_url") is None

    def similarity(self, spec, pairs, tables, *, cache=None, threads=None, rated=None, **_):
        """rated: (texts_a, texts_b) of the rated pairs, judged after the matrices by the
        same server into the same cache, so the calibration job finds them all there.

        Before any request (and before a local server loads its model) the job's log says
        how many judgements it will ask and how long that takes; above max_pairs it stops."""
        settings = JudgeSettings(**{k: spec[k] for k in JUDGE_KEYS if spec.get(k) is not None})
        shown = {k: v for k, v in asdict(settings).items() if k != "api_key_env"}
        stream = judge_stream(settings, pairs, tables, rated or ([], []))
        the_plan = plan(stream, settings, cache)
        log.info("judge: %s", the_plan)
        the_plan.check(settings.max_pairs)
        if settings.base_url is not None:
            del shown["base_url"]
            judged = _judge_all(settings, pairs, tables, cache, rated, stream)
        elif not the_plan.missing:  # every judgement is cached (a rerun): no server starts
            judged = _judge_all(settings, pairs, tables, cache, rated, stream)
        else:
            # One local server for the whole job; the cache key names the model and the server
            # (build and configuration: its slots, one per request in flight), not the port.
            # json mode needs no logprobs: llama-cpp-python's server then skips the logits of
            # prompt tokens. One request at a time by default: the server's one slot sees them
            # in the same order on every run.
            with LlamaServer(
                packaged_model_path(),
                n_ctx=settings.n_ctx,
                threads=threads,
                logits_all=settings.score_mode == "logprob",
                backend=settings.server,
                parallel=settings.in_flight,
            ) as srv:
                local = replace(
                    settings,
                    base_url=srv.base_url,
                    model=packaged_model_name(),
                    server_id=srv.backend_id,
                    concurrency=settings.in_flight,
                )
                judged = _judge_all(local, pairs, tables, cache, rated, stream)
        if settings.base_url is None:
            keyed, model, _ = keyed_settings(settings)
            shown |= {"model": model, "server_id": keyed.server_id}
        for pair in pairs:
            yield pair, judged[pair], {"judge": shown}

    def pair_scores(self, spec, texts_a, texts_b, *, cache=None, threads=None, **_):
        """The judge's score of (text_a, text_b), asked as a matrix asks (theme of A first),
        with the method's settings and prompt through its cache (results/cache/judge.sqlite):
        a pair judged before is never asked again, and with base_url null a local server
        starts only when a pair is missing from the cache."""
        settings = JudgeSettings(**{k: spec[k] for k in JUDGE_KEYS if spec.get(k) is not None})
        if settings.base_url is None:
            settings = replace(settings, threads=threads)
        try:
            scores, stats = judge_pairs(list(texts_a), list(texts_b), settings, cache)
        except JudgeError as e:
            raise StepError(f"judging the rated pairs: {e}") from e
        log.info("judge of the rated pairs: %s", stats)
        return scores


def judge_stream(settings, pairs, tables: dict, rated=([], [])) -> list[tuple[str, str]]:
    """Every distinct request of the comparisons' matrices and the rated pairs (and the
    reversed ones with both_orders), sorted: the one stream the judge's job asks."""
    asked = {(str(a), str(b)) for a, b in zip(*rated, strict=True)}
    for a, b in pairs:
        asked.update((str(x), str(y)) for x in tables[a]["text"] for y in tables[b]["text"])
    if settings.both_orders:  # the reversed requests sorted in too (cache keys omit the flag)
        asked.update([(b, a) for a, b in asked])
    return sorted(asked)


def _judge_all(settings, pairs, tables: dict, cache, rated=None, stream=()) -> dict:
    """Judge every pair of every comparison, then the rated pairs; a failure of a
    comparison names the pair and keeps the cache, one of a rated pair is left to the
    calibration job, which asks again and reports it.

    All of them are asked as one stream in sorted order (judge_stream), so requests that
    share a Theme A (a comparison's and the rated pairs') follow each other and the server's
    prompt cache serves that prefix once: on the demo, 4,745 prompt tokens evaluated
    instead of 5,177 as two streams. The loops below then read the cache without asking
    again: a request that failed in the stream had its `max_retries` there, and is reported
    from its `failed` row (asking it again doubled its requests)."""
    rated = rated or ([], [])
    texts_a, texts_b = [a for a, _ in stream], [b for _, b in stream]
    if stream:  # judge_pairs asks only what the cache lacks; the job logged the plan
        one_way = replace(settings, both_orders=False)
        try:
            _, stats = judge_pairs(texts_a, texts_b, one_way, cache, announce=False)
            log.info("judge: %d distinct requests in one sorted stream: %s", len(stream), stats)
        except JudgeError as e:
            log.info("judge: %d distinct requests in one sorted stream: %s", len(stream), e.stats)
            log.info("judge: some requests of the sorted stream failed; asked again below")
    out = {}
    for a, b in pairs:
        try:
            S, stats = judge_matrix(
                tables[a]["text"].tolist(), tables[b]["text"].tolist(), settings, cache, ask=False
            )
        except JudgeError as e:
            raise StepError(f"judging {a} vs {b}: {e}") from e
        log.info("judge %s vs %s: %s", a, b, stats)
        out[(a, b)] = S
    if rated[0]:
        try:
            _, stats = judge_pairs(*rated, settings, cache, ask=False)
            log.info("judge of the %d rated pairs (for calibration): %s", len(rated[0]), stats)
        except JudgeError as e:
            log.warning("rated pairs: %s (the calibration job asks again)", e)
    return out


KIND = LlmJudge()
