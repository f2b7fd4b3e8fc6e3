"""The one cache mechanism (themesim.store) and the caches written before it."""

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from themesim.llm.judge import judge_matrix
from themesim.llm.judge_settings import JudgeSettings
from themesim.store import ContentFiles, Kept, atomic_write, canonical_key, stamp

BEFORE = Path(__file__).parent / "data" / "judge_cache_c33c70d.sql"
NATIVE = "llama-server 0.5.0-dev (build 1, commit 0c1e570), 1 slot, --flash-attn off"
A = [
    "Carers are tired: looking after a parent leaves no time to rest",
    "Money worries: the costs of care",
]
B = ["Sleep loss", "Financial strain of caregiving", "Gardening"]


def stored(path, mode: str) -> np.ndarray:
    """The scores the file holds for A x B in one score mode (no server id), read by SQL."""
    con = sqlite3.connect(path)
    got = {}
    for a, b, score, settings in con.execute(
        "SELECT text_a, text_b, score, settings FROM judgements WHERE status = 'ok'"
    ):
        settings = json.loads(settings)
        if settings["score_mode"] == mode and "server" not in settings:
            got[(a, b)] = score
    con.close()
    return np.array([[got[(a, b)] for b in B] for a in A])


@pytest.mark.parametrize(
    "extra",
    [
        {"score_mode": "json"},
        {"score_mode": "logprob"},
        {"score_mode": "logprob", "server_id": NATIVE},
        {"score_mode": "json", "server_id": NATIVE},
    ],
    ids=["json", "logprob", "llama-server logprob", "llama-server json"],
)
def test_a_judge_cache_written_before_still_answers_every_pair(fake_llm, tmp_path, extra):
    """tests/data/judge_cache_c33c70d.sql is `sqlite3 .dump` of a judge.sqlite that themesim
    c33c70d wrote (its 24 judgements: 2 x 3 themes in four settings, against a fake
    endpoint). This version finds every one of them: no request is sent."""
    cache = tmp_path / "judge.sqlite"
    con = sqlite3.connect(cache)
    con.executescript(BEFORE.read_text(encoding="utf-8"))
    con.close()
    srv = fake_llm(lambda n, body, headers: (500, "must not be asked", 0))
    settings = JudgeSettings(
        base_url=srv.url, model="fake-model", max_retries=0, timeout_s=5, **extra
    )
    scores, stats = judge_matrix(A, B, settings, cache, progress=False)
    assert srv.calls == 0 and stats.cached == 6 and stats.calls == 0
    if "server_id" not in extra:
        np.testing.assert_array_equal(scores, stored(cache, extra["score_mode"]))
    assert np.isfinite(scores).all() and ((scores >= 0) & (scores <= 1)).all()


def test_the_key_of_a_request_is_the_sha256_of_its_canonical_json():
    fields = {"text_b": "ß", "model": "m", "seed": 0}
    canon = '{"model":"m","seed":0,"text_b":"ß"}'
    assert canonical_key(fields) == hashlib.sha256(canon.encode()).hexdigest()


def test_a_kept_value_is_found_under_its_key_only_and_keeps_its_order(tmp_path):
    kept = Kept(tmp_path / "sub" / "value.json")
    assert kept.get("k1") is None
    made = []

    def make():
        made.append(1)
        return {"pool": 10, "seed": 2, "alpha": 0.05}  # not sorted: kept so

    assert kept.value("k1", make) == {"pool": 10, "seed": 2, "alpha": 0.05}
    again = Kept(tmp_path / "sub" / "value.json").value("k1", make)
    assert list(again) == ["pool", "seed", "alpha"] and len(made) == 1
    assert kept.get("k2") is None  # another stamp: a miss, made again
    (tmp_path / "sub" / "value.json").write_text("{not json")
    assert kept.get("k1") is None
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["value.json"]  # no temp left


def test_an_unwritable_place_only_skips_keeping(tmp_path):
    blocked = tmp_path / "a-file"  # a file where the folder would be: nothing can be written
    blocked.write_text("")
    assert Kept(blocked / "value.json").value("k", lambda: [1, 2]) == [1, 2]
    assert blocked.read_text() == "" and Kept(blocked / "value.json").get("k") is None


def test_stamp_follows_size_and_mtime(tmp_path):
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    first = stamp([f])
    assert stamp([f]) == first
    os.utime(f, ns=(1, 1))
    assert stamp([f]) != first


def test_content_files_are_written_once_whole(tmp_path):
    files = ContentFiles(tmp_path / "kw", ".json")
    sha = "ab" + "0" * 62
    assert files.read(sha) is None
    assert files.write(sha, b"[1]") is True
    assert files.path(sha) == tmp_path / "kw" / "ab" / f"{sha}.json"
    assert files.write(sha, b"[2]") is False and files.read(sha) == b"[1]"
    files.drop(sha)
    assert files.read(sha) is None
    atomic_write(tmp_path / "x.bin", b"one")
    atomic_write(tmp_path / "x.bin", b"two")
    assert (tmp_path / "x.bin").read_bytes() == b"two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kw", "x.bin"]
