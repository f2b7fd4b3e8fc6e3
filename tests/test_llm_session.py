"""One settings base and one cached call session for every LLM caller (themesim.llm.session)."""

import ast
import sqlite3
from pathlib import Path

import pytest

from themesim.coder.llm import TABLE as CODER
from themesim.coder.llm import CoderLLMSettings
from themesim.errors import InputError
from themesim.llm.generate import TABLE as GENERATE
from themesim.llm.generate import GenerateSettings
from themesim.llm.judge_cache import TABLE as JUDGE
from themesim.llm.judge_settings import JudgeSettings
from themesim.llm.paraphrase import TABLE as PARAPHRASE
from themesim.llm.paraphrase import ParaphraseSettings
from themesim.llm.session import EndpointSettings

SRC = Path(__file__).resolve().parents[1] / "src" / "themesim"
TAIL = ["attempts", "seconds", "updated_at"]
OUTCOME = ["raw_response", "prompt_tokens", "completion_tokens", "error", *TAIL]

# The columns of the caches written before the tables had one source: a cache file of an
# earlier run must take the rows of this one.
COLUMNS = {
    "judgements": ["key", "model", "prompt_version", "prompt_sha256", "text_a", "text_b"]
    + ["settings", "status", "score", *OUTCOME],
    "generations": ["key", "model", "prompt_version", "prompt_sha256", "stage", "seed", "text"]
    + ["settings", "status", "themes", *OUTCOME],
    "codings": ["key", "model", "prompt_version", "prompt_sha256", "codebook", "passage"]
    + ["settings", "status", "answer", *OUTCOME],
    "paraphrases": ["key", "model", "prompt_version", "prompt_sha256", "text", "k", "settings"]
    + ["paraphrases", "raw_response", *TAIL],
}


@pytest.mark.parametrize("table", [JUDGE, GENERATE, CODER, PARAPHRASE], ids=lambda t: t.name)
def test_cache_tables_keep_their_columns(table):
    con = sqlite3.connect(":memory:")
    con.execute(table.schema)
    assert [r[1] for r in con.execute(f"PRAGMA table_info({table.name})")] == COLUMNS[table.name]


def test_a_row_stored_by_name_is_found_ok_only(tmp_path):
    con = JUDGE.open(tmp_path / "judge.sqlite")
    row = {c: "x" for c in COLUMNS["judgements"]} | {"score": 0.25, "attempts": 1}
    JUDGE.insert(con, row | {"key": "k1", "status": "ok"})
    JUDGE.insert(con, row | {"key": "k2", "status": "failed", "score": None})
    JUDGE.insert(con, row | {"key": "k3", "status": "ok", "score": 7.0})
    assert JUDGE.answers(con, ["k1", "k2", "k3", "k4"]) == {"k1": 0.25, "k3": 7.0}
    assert JUDGE.answers(con, ["k1", "k3"], "score BETWEEN 0 AND 1 AND ") == {"k1": 0.25}
    para = PARAPHRASE.open(tmp_path / "paraphrase.sqlite")  # no status: every row is an answer
    PARAPHRASE.insert(para, {c: "y" for c in COLUMNS["paraphrases"]} | {"key": "p", "k": 2})
    assert PARAPHRASE.answers(para, ["p"]) == {"p": "y"}


@pytest.mark.parametrize(
    "cls, where",
    [
        (JudgeSettings, "judge settings"),
        (GenerateSettings, "generate_themes settings"),
        (ParaphraseSettings, "config ceiling"),
        (CoderLLMSettings, "grounding.coder"),
    ],
)
def test_every_caller_has_the_one_settings_base(cls, where):
    assert issubclass(cls, EndpointSettings) and cls.WHERE == where
    with pytest.raises(InputError) as e:
        cls(base_url="http://127.0.0.1:9/v1")
    assert e.value.where == where and "model is not" in e.value.problem
    with pytest.raises(InputError):
        cls(max_retries=-1)
    assert cls().max_retries == 4 and cls().backoff_s == 1.0


def test_chunks_does_not_import_generate():
    tree = ast.parse((SRC / "llm" / "chunks.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }
    assert "themesim.llm.generate" not in imported


def test_each_callers_stats_line_ends_in_the_shared_cost():
    """CallStats: what the caller asked, then the calls, tokens and time, as the log shows."""
    from themesim.llm.generate import GenerateStats
    from themesim.llm.judge import JudgeStats

    cost = dict(calls=7, prompt_tokens=600, completion_tokens=42, seconds=3.25)
    judge = JudgeStats(judgements=6, cached=1, done=4, failed=1, **cost)
    assert str(judge) == (
        "6 judgements (1 cached, 4 new, 1 failed, 0 skipped), 7 calls, "
        "600 prompt + 42 completion tokens, 3.2 s"
    )
    generate = GenerateStats(chunks=3, requests=5, cached=2, done=3, **cost)
    assert str(generate) == (
        "5 answers (2 cached, 3 new) of 3 chunks, 7 calls, 600 prompt + 42 completion tokens, 3.2 s"
    )
    assert "JudgeStats(" in repr(judge)  # the repr stays the dataclass's, for debugging


def test_the_scoring_callers_answer_settings():
    """llm.session.answer_settings, in the judge's and the coder's cache keys: the coder counts
    max_tokens in json mode only, the judge always (1 for a logprob answer); the local server
    that answered keys its scores."""
    from dataclasses import replace

    from themesim.coder.llm import _answer_settings as coder_settings
    from themesim.llm.judge_cache import _answer_settings as judge_settings

    coder = CoderLLMSettings(base_url="http://x", model="m")
    assert coder_settings(coder) == {"score_mode": "logprob", "temperature": 0.0, "seed": 0}
    assert coder_settings(replace(coder, score_mode="json", server_id="srv")) == {
        "score_mode": "json", "temperature": 0.0, "max_tokens": 48, "seed": 0, "server": "srv"
    }  # fmt: skip
    judge = JudgeSettings(base_url="http://x", model="m")
    assert judge_settings(judge) == {
        "score_mode": "logprob", "temperature": 0.0, "max_tokens": 1, "seed": 0
    }  # fmt: skip
    assert judge_settings(replace(judge, score_mode="json", server_id="srv")) == {
        "score_mode": "json", "temperature": 0.0, "max_tokens": 24, "seed": 0, "server": "srv"
    }  # fmt: skip
