"""Theme generation: chunking, parsing, and the calls against a fake local endpoint (no model)."""

import json
import logging
import re
import sqlite3

import pandas as pd
import pytest
from helpers import completion, generated_themes

from themesim.errors import InputError
from themesim.io.themes import read_theme_file
from themesim.llm.chunks import (
    approx_tokens,
    chunk_transcripts,
    pack_lines,
    segment_lines,
    text_budget,
)
from themesim.llm.generate import (
    GenerateError,
    GenerateSettings,
    generate_runs,
    parse_themes,
    write_theme_csv,
)
from themesim.llm.prompts import load_prompts

# ---------------------------------------------------------------- chunking


def segments(rows) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"transcript": t, "segment": i, "speaker": s, "text": x, "start": 0.0, "end": 0.0}
            for i, (t, s, x) in enumerate(rows)
        ]
    )


def test_segment_lines_keep_order_and_drop_empty_text():
    df = segments(
        [("p2", "Bo", "later"), ("p1", "Interviewer", "Hi  there"), ("p1", "", "no speaker")]
    )
    df.loc[3] = ["p1", 9, "Ann", "   ", 0.0, 0.0]
    assert segment_lines(df) == [
        ("p1", "Interviewer: Hi there"),
        ("p1", "no speaker"),
        ("p2", "Bo: later"),
    ]


def test_chunks_fit_the_budget_and_keep_every_line_once():
    lines = [(f"p{i // 5}", (f"Ann: line {i} " + "word " * (i % 7)).strip()) for i in range(23)]
    budget = 40
    chunks = chunk_transcripts(lines, budget, 3.0)
    assert len(chunks) > 1
    for c in chunks:
        assert approx_tokens(c, 3.0) <= budget + 1  # + the last line's newline rounding
        assert c.startswith("[Interview p")
    body = [ln for c in chunks for ln in c.split("\n") if ln and not ln.startswith("[")]
    assert body == [line for _, line in lines]
    # a transcript continued in the next chunk is named again there
    assert sum(c.count("[Interview p1]") for c in chunks) >= 1


def test_one_chunk_when_everything_fits():
    lines = [("a", "Ann: one"), ("a", "Bo: two"), ("b", "Cy: three")]
    assert chunk_transcripts(lines, 1000, 3.0) == [
        "[Interview a]\nAnn: one\nBo: two\n\n[Interview b]\nCy: three"
    ]


def test_a_line_longer_than_the_budget_is_cut_at_sentences():
    long = "Ann: " + " ".join(f"Sentence number {i} is here." for i in range(40))
    chunks = chunk_transcripts([("a", long)], 60, 3.0)
    assert len(chunks) >= 5
    assert all(approx_tokens(c, 3.0) <= 61 for c in chunks)
    rejoined = " ".join(c.split("\n", 1)[1] for c in chunks)
    assert rejoined == long


def test_budget_is_context_minus_prompt_and_answer():
    p = load_prompts("generate_v1")["chunk"]
    s = GenerateSettings(n_ctx=2048, max_tokens=768)
    b = text_budget(p, s, 5)
    overhead = sum(approx_tokens(m["content"], 3.0) + 8 for m in p.messages("", 5))
    assert b == 2048 - overhead - 768 - 32 and 900 < b < 1200
    with pytest.raises(InputError, match="Raise n_ctx"):
        text_budget(p, GenerateSettings(n_ctx=1024, max_tokens=900), 5)


def test_pack_lines_groups_within_budget():
    lines = ["x" * 30, "y" * 30, "z" * 30, "w" * 300]
    assert pack_lines(lines, 25, 3.0) == [lines[:2], lines[2:3], lines[3:]]


# ---------------------------------------------------------------- parsing


def test_parse_themes_accepts_the_usual_shapes():
    obj = {"themes": [{"name": " Money ", "description": "Costs.", "keywords": ["a", " b "]}]}
    assert parse_themes(json.dumps(obj)) == [
        {"name": "Money", "description": "Costs.", "keywords": ["a", "b"]}
    ]
    fenced = '```json\n[{"name": "Guilt", "description": "Feeling bad.", "keywords": "x, y"}]\n```'
    assert parse_themes(fenced)[0]["keywords"] == ["x", "y"]
    other_key = '{"results": [{"theme": "Sleep", "description": "Broken nights."}]}'
    assert parse_themes(other_key) == [
        {"name": "Sleep", "description": "Broken nights.", "keywords": []}
    ]


def test_parse_themes_drops_incomplete_and_duplicate_themes():
    items = [
        {"name": "A", "description": "one"},
        {"name": "", "description": "no name"},
        {"name": "B"},
        {"name": "a", "description": "same name"},
        "not an object",
        {"name": "C", "description": "three", "keywords": None},
    ]
    got = parse_themes(json.dumps({"themes": items}))
    assert [t["name"] for t in got] == ["A", "C"]


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "Here are the themes: money and guilt.",
        '{"themes": [{"name": "A", "description": "cut off',
        '{"themes": []}',
        '{"themes": [{"name": "A"}]}',
        '{"score": 3}',
    ],
)
def test_parse_themes_rejects_unusable_answers(bad):
    with pytest.raises(ValueError):
        parse_themes(bad)


def test_written_csv_is_a_theme_set(tmp_path):
    themes = [
        {"name": "Money, costs", "description": 'Says "too much".', "keywords": ["a;b", "c"]},
        {"name": "Guilt", "description": "Feels bad.", "keywords": []},
    ]
    path = tmp_path / "run1.csv"
    write_theme_csv(themes, path)
    assert path.read_text().splitlines()[0] == "id,name,description,keywords"
    df = read_theme_file(path, set_name="run1", text_template="{name}: {description}")
    assert df["theme_id"].tolist() == ["T01", "T02"]
    assert df["name"].tolist() == ["Money, costs", "Guilt"]
    assert list(df["keywords"].iloc[0]) == ["a,b", "c"]


# ---------------------------------------------------------------- calls (fake endpoint)

SEG = segments(
    [("p1", "Ann", f"Sentence {i} about caring for my mother at night.") for i in range(40)]
    + [("p2", "Bo", f"Sentence {i} about the cost of care and my job.") for i in range(40)]
)


@pytest.fixture
def fake(fake_llm):
    """fake(behave=generated_themes) runs a fake generation server for this test."""
    return lambda behave=generated_themes: fake_llm(behave)


def settings(url, **kw):
    base = dict(
        base_url=url,
        model="fake-model",
        n_ctx=1024,
        max_tokens=256,
        max_retries=2,
        timeout_s=5,
        backoff_s=0.01,
        backoff_max_s=0.02,
    )
    return GenerateSettings(**(base | kw))


def test_runs_chunk_then_merge_and_rerun_makes_zero_calls(fake, tmp_path):
    srv = fake()
    cache = tmp_path / "cache" / "generate.sqlite"
    seeds = {"r1": 11, "r2": 12}
    out, stats = generate_runs(SEG, seeds, settings(srv.url), cache)
    n_chunks = stats.chunks
    assert n_chunks >= 3
    assert srv.calls == stats.calls == stats.done == n_chunks * 2 + 2
    n = n_chunks * 2 + 2  # the job's log line: readable, never the dataclass's repr
    assert str(stats).startswith(f"{n} answers (0 cached, {n} new) of {n_chunks} chunks, ")
    # chunk-major order: each chunk is asked for both seeds in a row
    assert [b["seed"] for b in srv.bodies[:4]] == [11, 12, 11, 12]
    assert srv.bodies[0]["temperature"] == 0.7 and srv.bodies[0]["max_tokens"] == 256
    schema = srv.bodies[0]["response_format"]["schema"]
    assert schema["properties"]["themes"]["maxItems"] == 5
    assert srv.bodies[-1]["response_format"]["schema"]["properties"]["themes"]["maxItems"] == 10
    # the merge call sees exactly the run's chunk themes
    merge_r1 = srv.bodies[-2]["messages"][-1]["content"]
    assert merge_r1.count("- chunk 11 ") == 3 * n_chunks and "chunk 12" not in merge_r1
    assert [t["name"] for t in out["r1"]] == [f"merge 11 {srv.calls - 1} {i}" for i in range(3)]
    assert out["r1"] != out["r2"]

    again, stats2 = generate_runs(SEG, seeds, settings(srv.url), cache)
    assert again == out
    assert (stats2.calls, stats2.cached, stats2.done) == (0, n_chunks * 2 + 2, 0)
    assert srv.calls == n_chunks * 2 + 2
    with sqlite3.connect(cache) as con:
        rows = con.execute("SELECT stage, seed, status FROM generations").fetchall()
    assert sorted(set(rows)) == [
        ("chunk", 11, "ok"),
        ("chunk", 12, "ok"),
        ("merge", 11, "ok"),
        ("merge", 12, "ok"),
    ]


def test_the_cache_key_names_model_prompt_seed_and_text(fake, tmp_path):
    srv = fake()
    cache = tmp_path / "c.sqlite"
    one = SEG.iloc[:3]
    generate_runs(one, {"r": 1}, settings(srv.url), cache)
    assert srv.calls == 2  # one chunk, one merge
    generate_runs(one, {"r": 1}, settings(srv.url, timeout_s=9, max_retries=4), cache)
    assert srv.calls == 2  # retries and timeouts do not change the answer
    generate_runs(one, {"r": 2}, settings(srv.url), cache)
    generate_runs(one, {"r": 1}, settings(srv.url, model="other"), cache)
    generate_runs(SEG.iloc[:4], {"r": 1}, settings(srv.url), cache)
    assert srv.calls == 8


def test_garbage_is_retried_with_another_seed(fake, tmp_path):
    def behave(n, body, headers):
        if n == 1:
            return 200, "<html>not json</html>", 0
        if n == 2:
            return 200, completion("The themes are money and guilt."), 0
        return generated_themes(n, body, headers)

    srv = fake(behave)
    out, stats = generate_runs(SEG.iloc[:3], {"r": 5}, settings(srv.url), tmp_path / "c.sqlite")
    # each unusable reply reseeds; the merge call starts again from the run's seed
    assert [b["seed"] for b in srv.bodies] == [5, 1005, 2005, 5]
    assert stats.calls == 4 and len(out["r"]) == 3


def test_garbage_always_is_a_clear_error_never_an_empty_set(fake, tmp_path, caplog):
    def behave(n, body, headers):
        if "Consolidate" in body["messages"][-1]["content"]:
            return 200, completion('{"themes": []}'), 0
        return generated_themes(n, body, headers)

    srv = fake(behave)
    cache = tmp_path / "c.sqlite"
    with caplog.at_level(logging.WARNING, logger="themesim"):
        with pytest.raises(GenerateError) as err:
            generate_runs(SEG.iloc[:3], {"r": 5}, settings(srv.url, max_retries=2), cache)
    msg = str(err.value)
    assert "run r (seed 5), merge 1" in msg and "unparsable answer" in msg
    assert "3 attempt(s)" in msg and '{"themes": []}' in msg
    assert "1 answers before it are cached" in msg and "resumes" in msg
    assert srv.calls == 1 + 3 and "retry 1/2" in caplog.text
    with sqlite3.connect(cache) as con:
        rows = con.execute("SELECT stage, status, themes FROM generations ORDER BY stage")
        rows = rows.fetchall()
    assert [r[:2] for r in rows] == [("chunk", "ok"), ("merge", "failed")] and rows[1][2] is None

    # a rerun asks only the failed call again
    srv2 = fake()
    out, stats = generate_runs(SEG.iloc[:3], {"r": 5}, settings(srv2.url), cache)
    assert srv2.calls == 1 and stats.cached == 1 and len(out["r"]) == 3


def test_server_errors_are_retried_then_named(fake, tmp_path):
    srv = fake(lambda n, b, h: (503, "overloaded", 0))
    with pytest.raises(GenerateError, match="HTTP 503") as err:
        generate_runs(SEG.iloc[:3], {"r": 1}, settings(srv.url), tmp_path / "c.sqlite")
    assert srv.calls == 3 and "chunk 1 of 1" in str(err.value)


def test_prompt_too_long_for_the_server_says_what_to_change(fake, tmp_path):
    srv = fake(lambda n, b, h: (400, '{"error": "Requested tokens exceed context window"}', 0))
    with pytest.raises(GenerateError, match="HTTP 400") as err:
        generate_runs(SEG.iloc[:3], {"r": 1}, settings(srv.url), tmp_path / "c.sqlite")
    # asked once more without response_format (the server may reject that), then not retried
    assert srv.calls == 2 and "response_format" not in srv.bodies[1]
    assert "exceed context window" in str(err.value) and "chars_per_token" in str(err.value)


def test_api_key_is_sent_but_never_stored(fake, tmp_path, monkeypatch):
    secret = "sk-gen-secret-1234"
    monkeypatch.setenv("THEMESIM_GEN_KEY", secret)

    def behave(n, body, headers):
        assert headers.get("Authorization") == f"Bearer {secret}"
        if n == 1:
            return 200, completion(f"no themes, but your key is {secret}"), 0
        return generated_themes(n, body, headers)

    srv = fake(behave)
    cache = tmp_path / "c.sqlite"
    generate_runs(SEG.iloc[:3], {"r": 1}, settings(srv.url, api_key_env="THEMESIM_GEN_KEY"), cache)
    assert secret.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())
    with pytest.raises(InputError, match="THEMESIM_NO_KEY_HERE"):
        generate_runs(
            SEG.iloc[:3], {"r": 1}, settings(srv.url, api_key_env="THEMESIM_NO_KEY_HERE"), cache
        )


def test_bad_settings_and_input():
    with pytest.raises(InputError, match="model"):
        GenerateSettings(base_url="http://127.0.0.1:1/v1")
    with pytest.raises(InputError, match="max_themes"):
        GenerateSettings(max_themes=0)
    with pytest.raises(InputError, match="no text"):
        generate_runs(SEG.iloc[:0], {"r": 1}, settings("http://127.0.0.1:9/v1"), "unused.sqlite")
    with pytest.raises(InputError, match="generate_v9"):
        load_prompts("generate_v9")


# ---------------------------------------------------------------- quotes (generate_v2)


def quoting(n, body, headers):
    """Chunk answers quote the excerpt's first participant line (and invent one quote); merge
    answers pass on the candidates' quotes."""
    user = body["messages"][-1]["content"]
    assert '"quotes"' in user
    if "Consolidate" in user:
        quotes = re.findall(r"\(quotes: (.*)\)$", user, re.M)
        picked = [json.loads(q.split(" | ")[0]) for q in quotes]
        themes = [
            {"name": f"merged {i}", "description": "Merged.", "keywords": ["m"], "quotes": [q]}
            for i, q in enumerate(dict.fromkeys(picked))
        ]
    else:
        line = next(ln for ln in user.split("\n") if ln.startswith(("Ann: ", "Bo: ")))
        quote = line.split(": ", 1)[1]
        themes = [
            {
                "name": f"chunk {n}",
                "description": "What they say.",
                "keywords": ["care"],
                "quotes": [quote, "I was abducted by aliens during my night shift."],
            }
        ]
    return 200, completion(json.dumps({"themes": themes})), 0


def test_generate_v2_asks_for_quotes_and_writes_them(fake, tmp_path):
    from themesim.io.quotes import locate_quotes, quote_grounding_rate

    srv = fake(quoting)
    cache = tmp_path / "generate.sqlite"
    one = SEG.iloc[[0, 1, 40]]  # Ann's first two lines, Bo's first: one chunk
    out, stats = generate_runs(one, {"r": 1}, settings(srv.url, prompt="generate_v2"), cache)
    assert stats.chunks == 1 and srv.calls == 2
    theme = srv.bodies[0]["response_format"]["schema"]["properties"]["themes"]["items"]
    assert theme["required"] == ["name", "description", "keywords", "quotes"]
    merge = srv.bodies[1]["messages"][-1]["content"]
    first = "Sentence 0 about caring for my mother at night."
    assert f'(quotes: "{first}" | "I was abducted by aliens during my night shift.")' in merge
    assert out["r"] == [
        {"name": "merged 0", "description": "Merged.", "keywords": ["m"], "quotes": [first]}
    ]

    path = tmp_path / "r.csv"
    write_theme_csv(
        out["r"] + [{**out["r"][0], "name": "other", "quotes": ["Made up; twice"]}], path
    )
    assert path.read_text().splitlines()[0] == "id,name,description,keywords,quotes"
    df = read_theme_file(path, set_name="r", text_template="{name}: {description}")
    assert [list(q) for q in df["quotes"]] == [[first], ["Made up, twice"]]
    texts = {"p1": "Ann: " + "\nAnn: ".join(SEG["text"].iloc[:2])}
    located, missing = locate_quotes(df, texts)
    assert located["theme_id"].tolist() == ["T01"] and located["start"].tolist() == [5]
    assert missing["quote"].tolist() == ["Made up, twice"]
    assert quote_grounding_rate(located, missing) == 0.5


def test_v1_is_unchanged_and_v2_answers_are_cached_apart(fake, tmp_path):
    srv = fake()  # answers without quotes, whatever the prompt asks
    cache = tmp_path / "generate.sqlite"
    one = SEG.iloc[:3]
    v1, _ = generate_runs(one, {"r": 1}, settings(srv.url), cache)
    theme = srv.bodies[0]["response_format"]["schema"]["properties"]["themes"]["items"]
    assert "quotes" not in theme["properties"] and all("quotes" not in t for t in v1["r"])
    assert "(quotes:" not in srv.bodies[1]["messages"][-1]["content"]
    path = tmp_path / "v1.csv"
    write_theme_csv(v1["r"], path)
    assert path.read_text().splitlines()[0] == "id,name,description,keywords"

    v2, _ = generate_runs(one, {"r": 1}, settings(srv.url, prompt="generate_v2"), cache)
    assert srv.calls == 4  # another prompt version: new answers, not the v1 ones
    assert all(t["quotes"] == [] for t in v2["r"])  # asked for quotes, the answer gave none
    again, stats = generate_runs(one, {"r": 1}, settings(srv.url), cache)
    assert again == v1 and stats.calls == 0 and srv.calls == 4  # v1's cache still answers
