"""Theme generation with the real packaged Qwen2.5-Coder-1.5B on a local llama.cpp server."""

import importlib.util
import json
import sqlite3

import pandas as pd
import pytest

from themesim.llm import server as llama_server
from themesim.llm.chunks import approx_tokens
from themesim.llm.generate import GenerateSettings, generate_runs
from themesim.llm.prompts import load_prompts

# Two real generations (about 2 min on 2 cores): `make test-slow`, not `make test`.
pytestmark = pytest.mark.slow

TURNS = [
    ("Interviewer", "How do you manage work and caring for your mother?"),
    (
        "Amira",
        "Badly. My phone is face up on the desk all day in case she falls. I cut my hours to "
        "four days, which is a fifth of my wages gone, and I turned down a promotion twice.",
    ),
    ("Interviewer", "And how are you sleeping?"),
    (
        "Amira",
        "I don't. She calls out at night, so I am up two or three times. I am exhausted, my "
        "back hurts from lifting her, and I keep cancelling my own doctor's appointments.",
    ),
    ("Interviewer", "Do you get any help from services?"),
    (
        "Amira",
        "The home care agency sends someone different every week and nobody reads the notes. "
        "The hospital sent her home with no plan, and the social worker never rings back.",
    ),
]


@pytest.fixture(scope="module")
def segments():
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python is not installed: run `make install`")
    return pd.DataFrame(
        [
            {"transcript": "p01", "segment": i, "speaker": s, "text": t, "start": 0.0, "end": 0.0}
            for i, (s, t) in enumerate(TURNS)
        ]
    )


def test_local_model_generates_themes_and_a_rerun_makes_no_call(segments, tmp_path, monkeypatch):
    s = GenerateSettings(max_themes=5, chunk_themes=4, max_tokens=384, n_ctx=2048)
    cache = tmp_path / "generate.sqlite"
    runs, stats = generate_runs(segments, {"run1": 1}, s, cache)
    themes = runs["run1"]
    print(stats, *themes, sep="\n")
    assert (stats.chunks, stats.done, stats.cached) == (1, 2, 0)  # one chunk, one merge
    assert 2 <= len(themes) <= 5
    for t in themes:
        assert t["name"].strip() and len(t["description"].split()) >= 3
    assert len({t["name"].casefold() for t in themes}) == len(themes)
    # the approximate count (chars / 3 + 8 per message) is above the server's real count
    with sqlite3.connect(cache) as con:
        rows = con.execute("SELECT stage, text, settings, prompt_tokens FROM generations")
        rows = rows.fetchall()
    prompts = load_prompts(s.prompt)
    for stage, text, settings, real in rows:
        msgs = prompts[stage].messages(text, json.loads(settings)["max_themes"])
        estimate = sum(approx_tokens(m["content"], s.chars_per_token) + 8 for m in msgs)
        assert 0 < real <= estimate, (stage, real, estimate)

    def no_server(*args, **kwargs):
        raise AssertionError("a cached rerun must not start a server")

    monkeypatch.setattr(llama_server.LlamaServer, "__enter__", no_server)
    again, stats2 = generate_runs(segments, {"run1": 1}, s, cache)
    assert again == runs and stats2.calls == 0 and stats2.cached == 2


def test_local_model_quotes_with_generate_v2(segments, tmp_path):
    """generate_v2 with the packaged model: every theme has quotes, most found in the text.

    Measured once (2 shared cores, 285 s): the merge kept one theme ("Caregiving Challenges")
    with four quotes, all four found exactly (rate 1.0). v1's test gets 2-5 themes; v2 merging
    into one is why generate_v1 stays the default."""
    from themesim.io.quotes import locate_quotes, quote_grounding_rate

    s = GenerateSettings(
        prompt="generate_v2", max_themes=5, chunk_themes=4, max_tokens=512, n_ctx=2048
    )
    runs, stats = generate_runs(segments, {"run1": 1}, s, tmp_path / "generate.sqlite")
    themes = runs["run1"]
    print(stats, *themes, sep="\n")
    assert 1 <= len(themes) <= 5
    assert all(t["quotes"] for t in themes)
    table = pd.DataFrame(
        {"theme_id": [f"T{i}" for i in range(len(themes))], "quotes": [t["quotes"] for t in themes]}
    )
    text = "\n".join(f"{s}: {t}" for s, t in TURNS)
    located, missing = locate_quotes(table, {"p01": text})
    rate = quote_grounding_rate(located, missing)
    print(f"quote grounding rate {rate:.2f}; not found: {missing['quote'].tolist()}")
    assert rate >= 0.5
