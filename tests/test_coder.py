"""The automatic coder of grounding (themesim.coder): rules, cross-fitting, bases, agreement
with the human coding and the LLM coder's cache, on hand-computed cases."""

import math
import sqlite3

import numpy as np
import pandas as pd
import pytest

from themesim.coder.agreement import agreement_table
from themesim.coder.assign import (
    context_vectors,
    cross_fitted_scores,
    decide,
    fitted_thresholds,
    prototypes,
)
from themesim.coder.basis import basis_labels
from themesim.coder.llm import (
    CoderLLMSettings,
    code_segments,
    grammar,
    parse_codes,
    parse_letter_probs,
)
from themesim.coder.settings import coder_settings, set_coder
from themesim.errors import InputError, StepError

# Themes × segments scores: theme 0 resembles every segment (a hub).
S = np.array(
    [
        [0.50, 0.52, 0.48, 0.50],
        [0.45, 0.20, 0.10, 0.30],
        [0.05, 0.30, 0.20, 0.10],
    ]
)


def test_top1_takes_the_best_raw_score_or_the_best_above_its_mean():
    elig = np.array([True, True, True, False])
    plain = decide(S, elig, "top1", 0.25, center=False)
    # the hub wins every eligible segment; segment 3 is not eligible
    assert plain.tolist() == [[1, 0, 0], [1, 0, 0], [1, 0, 0], [0, 0, 0]]
    centred = decide(S, elig, "top1", 0.25, center=True)
    # means over the eligible segments: 0.5, 0.25, 0.1833; S minus mean per segment:
    # seg 0: 0, 0.2, -0.133 -> theme 1 (0.45 >= 0.25); seg 1: 0.02, -0.05, 0.117 -> theme 2
    # (0.30 >= 0.25); seg 2: -0.02, -0.15, 0.017 -> theme 2, but 0.20 < 0.25: none
    assert centred.tolist() == [[0, 1, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]]
    every = decide(S, elig, "all", 0.3)
    assert every.tolist() == [[1, 1, 0], [1, 0, 1], [1, 0, 0], [0, 0, 0]]


def test_context_mixes_the_same_speakers_neighbouring_turns():
    segs = pd.DataFrame({"transcript": ["t"] * 4, "speaker": ["I", "P", "I", "P"]})
    V = np.array([[1.0, 0], [0, 1.0], [1.0, 0], [1.0, 1.0]])
    W = context_vectors(V, segs, 1.0)
    # P's turns 1 and 3 are each other's neighbours: (0,1) + (1,1)/√2, normalised
    v = np.array([0, 1]) + np.array([1, 1]) / math.sqrt(2)
    assert W[1] == pytest.approx(v / np.linalg.norm(v))
    assert W[0] == pytest.approx([1, 0])  # I's turns 0 and 2 point the same way
    assert context_vectors(V, segs, 0.0)[3] == pytest.approx([1 / math.sqrt(2)] * 2)


def test_exemplar_prototypes_never_use_the_coded_transcripts_own_evidence():
    rng = np.random.default_rng(0)
    T, V = rng.normal(size=(2, 5)), rng.normal(size=(6, 5))
    groups = ["a", "a", "a", "b", "b", "b"]
    E = np.zeros((6, 2), dtype=bool)
    E[[0, 4], 0] = True
    base = cross_fitted_scores(T, V, groups, E, coding="exemplar", text_weight=0.5)
    E2 = E.copy()
    E2[1, 1] = True  # more evidence in transcript a
    moved = cross_fitted_scores(T, V, groups, E2, coding="exemplar", text_weight=0.5)
    assert moved[:, :3] == pytest.approx(base[:, :3])  # a's scores ignore a's evidence
    assert not np.allclose(moved[1, 3:], base[1, 3:])  # b's theme 1 now has a prototype
    # transcript b's theme 0 prototype: segment 0's vector (from a) plus half the text's
    Tn = T / np.linalg.norm(T, axis=1, keepdims=True)
    Vn = V / np.linalg.norm(V, axis=1, keepdims=True)
    in_a = np.array([1, 1, 1, 0, 0, 0], dtype=bool)[:, None]
    P = prototypes(Tn, Vn, E & in_a, 0.5)
    assert base[0, 3:] == pytest.approx(P[0] @ Vn[3:].T)
    assert cross_fitted_scores(T, V, groups, E, coding="similarity") == pytest.approx(
        (T / np.linalg.norm(T, axis=1, keepdims=True)) @ Vn.T
    )


def test_fitted_threshold_maximises_kappa_on_the_other_transcripts():
    scores = np.array([[0.9, 0.8, 0.3, 0.7, 0.6, 0.2]])
    coded = np.array([[1], [1], [0], [1], [0], [0]], dtype=bool)
    groups = np.array(["a", "a", "a", "b", "b", "b"])
    thr = fitted_thresholds(scores, coded, groups, np.ones(6, bool), default=0.5, min_coded=1)
    # for a: fitted on b (0.7 coded, 0.6 and 0.2 not): 0.7 separates them (κ = 1)
    # for b: fitted on a (0.9, 0.8 coded, 0.3 not): 0.8 is the lowest with κ = 1
    assert thr[0].tolist() == [0.7, 0.7, 0.7, 0.8, 0.8, 0.8]
    few = fitted_thresholds(scores, coded, groups, np.ones(6, bool), default=0.5, min_coded=2)
    assert few[0].tolist() == [0.5, 0.5, 0.5, 0.8, 0.8, 0.8]  # b has 1 coded segment only


def _labels(rows):
    return pd.DataFrame(rows, columns=["transcript", "segment", "theme_id", "source", "score"])


def test_bases_compare_like_with_like():
    h = _labels([("t", 1, "H1", "coded", 1), ("t", 1, "H1", "assigned", 0.4)])
    q = _labels([("t", 2, "Q1", "quote", 1), ("t", 2, "Q1", "assigned", 0.5)])
    p = _labels([("t", 3, "P1", "assigned", 0.3)])
    labels = {"h": h, "q": q, "p": p}
    out = basis_labels(labels, "h", "p", ["coder", "evidence"], ["h", "p"])
    assert [b for b, *_ in out] == ["coder"]  # p carries no evidence
    assert set(out[0][1]["source"]) == {"assigned"} and out[0][3] == ""
    out = basis_labels(labels, "h", "q", ["coder", "evidence", "mixed"], ["h", "q"])
    assert [b for b, *_ in out] == ["coder", "evidence", "mixed"]
    assert set(out[1][1]["source"]) == {"coded"} and set(out[1][2]["source"]) == {"quote"}
    # mixed: h's coding (it has coded segments) against all of q's labels
    assert set(out[2][1]["source"]) == {"coded"} and set(out[2][2]["source"]) == {
        "quote",
        "assigned",
    }
    out = basis_labels(labels, "h", "p", ["coder"], ["h"])
    assert "no coder labels for p" in out[0][3]
    # evidence only asked, none applies: the coder row stands in
    assert [b for b, *_ in basis_labels(labels, "h", "p", ["evidence"], ["h", "p"])] == ["coder"]


def test_coder_agreement_by_hand():
    segments = pd.DataFrame(
        {
            "transcript": ["a"] * 4 + ["b"] * 4,
            "segment": [0, 1, 2, 3] * 2,
            "speaker": ["I", "P"] * 4,
            "text": "x",
        }
    )
    # human: H1 on a1, b1; H2 on a3. coder: H1 on a1, b3; H2 on a3.
    labels = _labels(
        [
            ("a", 1, "H1", "coded", 1),
            ("b", 1, "H1", "coded", 1),
            ("a", 3, "H2", "coded", 1),
            ("a", 0, "H2", "coded", 1),  # on an interviewer turn: not scored
            ("a", 1, "H1", "assigned", 0.5),
            ("b", 3, "H1", "assigned", 0.5),
            ("a", 3, "H2", "assigned", 0.5),
        ]
    )
    themes = {"h": pd.DataFrame({"theme_id": ["H1", "H2"], "name": ["one", "two"]})}
    methods = {"m": {"sets": ["h", "x"], "coded_sets": ["h"], "coders": {"h": "sim"}}}
    t = agreement_table(methods, {("m", "h"): labels}, themes, segments, ["I"])
    h1 = t[(t.set == "h") & (t.theme_id == "H1")].iloc[0]
    # 4 participant segments; H1: both 1, human only 1, coder only 1, neither 1 -> κ = 0
    assert (h1.n_segments, h1.n_human, h1.n_coder, h1.n_both) == (4, 2, 2, 1)
    assert h1.kappa == pytest.approx(0.0, abs=1e-12) and h1.prevalence_human == 0.5
    h2 = t[(t.set == "h") & (t.theme_id == "H2")].iloc[0]
    assert h2.kappa == 1.0
    overall = t[(t.set == "h") & (t.level == "overall")].iloc[0]
    assert overall.median_kappa == pytest.approx(0.5)
    # pooled over 8 (segment, theme) cells: both 2, only human 1, only coder 1, neither 4
    p_e = (3 / 8) ** 2 + (5 / 8) ** 2
    assert overall.pooled_kappa == pytest.approx((6 / 8 - p_e) / (1 - p_e))
    assert math.isnan(overall.median_kappa_ci_low)  # two transcripts: no interval
    x = t[t.set == "x"]
    assert x.status.tolist() == ["no coder"]
    methods["m"]["coders"]["x"] = "sim"
    t = agreement_table(methods, {("m", "h"): labels}, themes, segments, ["I"])
    assert t[t.set == "x"].status.tolist() == ["unchecked"]


def test_settings_fill_the_llm_block_and_pick_the_coder_per_set():
    c = coder_settings({"coder": {"kind": "llm", "llm": {"sets": ["human"]}}})
    assert c["llm"]["threshold"] == 0.2 and c["llm"]["fallback"] == "similarity"
    assert set_coder(c, "minilm", "human") == "llm"
    assert set_coder(c, "minilm", "other") == "similarity"
    with pytest.raises(InputError, match=r"grounding.coder.kind: 'bert' is not a coder"):
        coder_settings({"coder": {"kind": "bert"}})
    # an endpoint without a model name: refused at parse time, not in the coder job
    with pytest.raises(InputError) as err:
        coder_settings({"coder": {"kind": "llm", "llm": {"base_url": "http://127.0.0.1:9/v1"}}})
    assert str(err.value) == (
        "config grounding.coder.llm.model: base_url is set (http://127.0.0.1:9/v1) but model "
        "is not. Give the model name the endpoint expects (grounding.coder.llm.model), or "
        "remove base_url to use the packaged local model"
    )
    # the llm block is not read by another coder kind
    assert coder_settings({"coder": {"llm": {"base_url": "http://x/v1"}}})["kind"] == "similarity"


# ------------------------------------------------------------------ the LLM coder


def test_grammar_and_answers():
    g = grammar(12)
    assert '"12" | "11" | "10" | "9"' in g and g.startswith('root ::= "{\\"codes\\": ["')
    assert parse_codes('{"codes": [3, 1, 3]}', 3) == [1, 3]
    with pytest.raises(ValueError, match="code 4 is not one of 1..3"):
        parse_codes('{"codes": [4]}', 3)
    # P over the letters and "0": A 0.5, B 0.25, none 0.25 (lower case and spaces match)
    probs = parse_letter_probs(
        {" A": math.log(0.4), "b": math.log(0.2), "0": math.log(0.2)}, ["A", "B", "C"]
    )
    assert probs == pytest.approx([0.5, 0.25, 0.0])
    with pytest.raises(ValueError, match="no code letter"):
        parse_letter_probs({"The": -0.1}, ["A"])
    # −inf is P 0; a server's 1e-7 for 0 is 0; a bad logprob of another token is ignored
    assert parse_letter_probs({"A": 1e-7, "B": -math.inf, "x": math.nan}, ["A", "B"]) == [1, 0]
    for bad in (math.nan, 5.0, 1000.0, True, "x"):
        with pytest.raises(ValueError, match="logprob"):
            parse_letter_probs({"A": bad, "0": -1.0}, ["A"])


def _choice(top: dict) -> dict:
    content = [
        {"token": "A", "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top.items()]}
    ]
    return {"choices": [{"message": {"content": "A"}, "logprobs": {"content": content}}]}


def test_llm_coder_caches_and_resumes(fake_llm, tmp_path):
    themes = pd.DataFrame({"name": ["Work", "Sleep"], "description": ["paid work", "no sleep"]})
    segs = pd.DataFrame(
        {
            "transcript": ["t"] * 3,
            "speaker": ["Interviewer", "Ann", "Ann"],
            "text": ["How is work?", "I cut my hours.", "I never sleep."],
        }
    )

    def behave(n, body, headers):
        user = body["messages"][-1]["content"].split("Passage to code")[1]
        if "never sleep" in user and n <= 2:
            return 500, {"error": "busy"}, 0
        top = {"B": math.log(0.6), "A": math.log(0.2), "0": math.log(0.2)}
        if "cut my hours" in user:
            top = {"A": math.log(0.9), "0": math.log(0.1)}
        return 200, _choice(top), 0

    srv = fake_llm(behave)
    s = CoderLLMSettings(base_url=srv.url, model="fake", max_retries=0, backoff_s=0.0)
    cache = tmp_path / "coder.sqlite"
    with pytest.raises(StepError, match="1 of 2 passages not coded"):
        code_segments(themes, segs, s, cache, rows=[1, 2])
    P = code_segments(themes, segs, s, cache, rows=[1, 2])
    assert P == pytest.approx(np.array([[0.9, 0.0], [0.2, 0.6]]))
    asked = srv.calls
    assert code_segments(themes, segs, s, cache, rows=[1, 2]) == pytest.approx(P)
    assert srv.calls == asked  # answered from the cache
    # the codebook is lettered in the system message, the interviewer's question shown
    body = srv.bodies[0]
    assert "A. Work: paid work\nB. Sleep: no sleep" in body["messages"][0]["content"]
    assert "Interviewer: How is work?" in body["messages"][1]["content"]
    assert body["max_tokens"] == 1 and body["top_logprobs"] == 20
    con = sqlite3.connect(cache)
    assert con.execute("SELECT COUNT(*) FROM codings WHERE status = 'ok'").fetchone()[0] == 2


def _bad_logprobs(bad: str) -> dict:
    """A logprob answer an endpoint should not give, by name."""
    if bad == "content_object":
        lp = {"content": {"token": "A", "top_logprobs": []}}
        return {"choices": [{"message": {"content": "A"}, "logprobs": lp}]}
    if bad == "no_token":
        top = [{"logprob": math.log(0.5)}, {"token": "0", "logprob": math.log(0.5)}]
        lp = {"content": [{"token": "A", "top_logprobs": top}]}
        return {"choices": [{"message": {"content": "A"}, "logprobs": lp}]}
    values = {"nan": (math.nan, math.log(0.5)), "positive": (5.0, 4.0), "huge": (1000.0, -1.0)}
    a, b = values[bad]
    return _choice({"A": a, "B": b})


@pytest.mark.parametrize(
    "bad, why",
    [
        ("nan", "logprob nan of 'A' is not a log-probability"),
        ("positive", "logprob 5.0 of 'A' is not a log-probability"),
        ("huge", "logprob 1000.0 of 'A' is not a log-probability"),
        ("no_token", 'a top logprob is not an object with "token" and "logprob"'),
        ("content_object", "logprobs.content is a dict, not a list of tokens"),
    ],
)
def test_llm_coder_refuses_a_bad_logprob_answer_and_never_caches_it(fake_llm, tmp_path, bad, why):
    """Regression: NaN logprobs were cached "ok" and gave NaN scores; 5 and 4 were read as
    P 0.73 and 0.27; 1000 raised OverflowError; a top logprob without "token", or `content`
    as an object, raised KeyError. Each is now an unusable answer: retried, then stored
    "failed" and named in the job's error; the next run asks it again."""
    themes = pd.DataFrame({"name": ["Work", "Sleep"], "description": ["paid work", "no sleep"]})
    segs = pd.DataFrame({"transcript": ["t"], "speaker": ["Ann"], "text": ["I cut my hours."]})
    good = _choice({"A": math.log(0.6), "B": math.log(0.2), "0": math.log(0.2)})
    srv = fake_llm(lambda n, body, headers: (200, _bad_logprobs(bad) if n <= 2 else good, 0))
    s = CoderLLMSettings(base_url=srv.url, model="fake", max_retries=1, backoff_s=0.0)
    cache = tmp_path / "coder.sqlite"
    with pytest.raises(StepError, match="1 of 1 passages not coded") as err:
        code_segments(themes, segs, s, cache)
    assert f"unparsable answer ({why}" in str(err.value)
    assert srv.calls == 2  # the first attempt and max_retries = 1 more
    con = sqlite3.connect(cache)
    assert con.execute("SELECT status, answer FROM codings").fetchall() == [("failed", None)]
    con.close()
    # the failed passage is asked again on the next run: 0.6 and 0.2 of 1
    assert code_segments(themes, segs, s, cache) == pytest.approx(np.array([[0.6, 0.2]]))
    assert srv.calls == 3


def test_llm_coder_asks_again_a_nan_answer_an_older_version_cached_ok(fake_llm, tmp_path):
    themes = pd.DataFrame({"name": ["Work", "Sleep"], "description": ["", ""]})
    segs = pd.DataFrame({"transcript": ["t"], "speaker": ["Ann"], "text": ["I cut my hours."]})
    srv = fake_llm(lambda n, body, headers: (200, _choice({"A": math.log(0.5), "0": -0.7}), 0))
    s = CoderLLMSettings(base_url=srv.url, model="fake", max_retries=0, backoff_s=0.0)
    cache = tmp_path / "coder.sqlite"
    first = code_segments(themes, segs, s, cache)
    con = sqlite3.connect(cache)
    with con:
        con.execute("UPDATE codings SET answer = '[NaN, NaN]'")  # as the old parser stored
    con.close()
    again = code_segments(themes, segs, s, cache)
    assert srv.calls == 2 and np.isfinite(again).all()
    assert again == pytest.approx(first)
    assert first[0].tolist() == pytest.approx([0.5 / (0.5 + math.exp(-0.7)), 0.0])


def test_report_shows_the_coder_beside_the_data_and_names_unchecked_sets(tmp_path):
    from themesim.report.grounding_section import coder_view

    segments = pd.DataFrame(
        {"transcript": ["a", "a", "b", "b"], "segment": [0, 1, 0, 1], "speaker": "P", "text": "x"}
    )
    labels = _labels([("a", 0, "H1", "coded", 1), ("a", 0, "H1", "assigned", 0.5)])
    themes = {"h": pd.DataFrame({"theme_id": ["H1"], "name": ["one"]})}
    methods = {
        "m": {"sets": ["h", "p"], "coded_sets": ["h"], "coders": {"h": "sim", "p": "sim"}},
        "j": {"sets": ["h"], "coded_sets": ["h"], "coders": {}},
    }
    table = agreement_table(methods, {("m", "h"): labels}, themes, segments)
    path = tmp_path / "coder_agreement.csv"
    table.to_csv(path, index=False)
    view = coder_view({"m": {"coder_agreement_csv": str(path)}, "j": {}})
    assert [r[:3] for r in view["rows"]] == [["m", "h", "sim"]]
    assert view["rows"][0][3].startswith("1.00 [")  # κ 1, no interval from 2 transcripts
    assert view["unchecked"] == ["m: p"] and view["no_coder"] == ["j: h"]
    assert coder_view({"m": {"coder_agreement_csv": str(tmp_path / "none.csv")}}) is None
