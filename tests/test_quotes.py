"""Locating a theme's quotes in the transcripts: exact after normalising, then fuzzy."""

import math

import pandas as pd

from themesim.io.quotes import FUZZY_CUTOFF, locate_quote, locate_quotes, quote_grounding_rate

TEXTS = {
    "a": "Amira: My phone is face up on the desk all day. If she rings I have to answer.\n",
    "b": "Dennis: I haven\u2019t slept a full night since the stroke, not once.\n",
}


def test_exact_after_normalising_case_space_and_quotes():
    hit = locate_quote("MY PHONE is  face up", TEXTS)
    assert hit == ("a", 7, 26, 100.0, "exact")
    assert TEXTS["a"][7:26] == "My phone is face up"
    # a straight apostrophe finds the typographic one
    hit = locate_quote("I haven't slept a full night", TEXTS)
    assert hit[0] == "b" and hit[4] == "exact"
    assert TEXTS["b"][hit[1] : hit[2]] == "I haven\u2019t slept a full night"


def test_fuzzy_finds_a_lightly_changed_quote_and_not_an_invented_one():
    # one word changed: "the" -> "my"; rapidfuzz partial_ratio 92.1 >= 90
    hit = locate_quote("my phone is face up on my desk all day", TEXTS)
    assert hit is not None and hit[0] == "a" and hit[4] == "fuzzy"
    assert round(hit[3], 1) == 92.1 and hit[3] >= FUZZY_CUTOFF
    assert TEXTS["a"][hit[1] : hit[2]].startswith("My phone is face up on the desk")
    assert locate_quote("carers feel supported by their local council", TEXTS) is None
    # short quotes are matched exactly only
    assert locate_quote("the desks", TEXTS) is None


def test_locate_quotes_and_grounding_rate():
    themes = pd.DataFrame(
        {
            "theme_id": ["T1", "T2", "T3"],
            "quotes": [
                ["face up on the desk", "invented words nobody said at all"],
                [],
                ["not once"],
            ],
        }
    )
    located, missing = locate_quotes(themes, TEXTS)
    assert located[["theme_id", "transcript"]].values.tolist() == [["T1", "a"], ["T3", "b"]]
    assert missing.values.tolist() == [["T1", "invented words nobody said at all"]]
    assert quote_grounding_rate(located, missing) == 2 / 3
    assert math.isnan(quote_grounding_rate(located.iloc[:0], missing.iloc[:0]))


def test_each_transcript_is_normalised_once_for_every_quote(monkeypatch):
    """A study's transcripts are long (an interview study: 3 MB of text); normalising them
    all again for each quote made locating quotes quadratic. One normalisation per
    transcript per call, and none again with the caller's cache."""
    import themesim.io.quotes as quotes

    calls = []
    real = quotes.normalise
    monkeypatch.setattr(quotes, "normalise", lambda text: calls.append(text) or real(text))
    themes = pd.DataFrame(
        {"theme_id": ["T1", "T2"], "quotes": [["face up on the desk", "not once"], ["slept"]]}
    )
    located, _ = locate_quotes(themes, TEXTS)
    assert len(located) == 3
    assert sorted(calls) == sorted(TEXTS.values())
    cache: dict = {}
    first, _ = locate_quotes(themes, TEXTS, normalised=cache)
    again, _ = locate_quotes(themes, TEXTS, normalised=cache)
    assert len(calls) == 4 and first.equals(again) and first.equals(located)
