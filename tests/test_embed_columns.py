"""The embedding job's pandas-free readers and its TF-IDF keywords computed apart."""

import pandas as pd
import pytest
from helpers import HUMAN, LLM

from themesim.embed.columns import read_segment_columns, read_theme_columns
from themesim.embed.keyword_cache import keyword_path, sets_keywords, tfidf_terms_apart
from themesim.embed.texts import theme_keywords, top_tfidf_terms
from themesim.errors import InputError
from themesim.io.themes import read_theme_file, read_themes_parquet, write_themes_parquet


@pytest.fixture
def sets(tmp_path):
    (tmp_path / "human.csv").write_text(HUMAN)
    (tmp_path / "llm.yaml").write_text(LLM)
    out = {}
    for name in ("human", "llm"):
        src = next(tmp_path.glob(f"{name}.*"))
        out[name] = tmp_path / f"{name}.parquet"
        write_themes_parquet(read_theme_file(src, name), out[name])
    return out


def test_theme_columns_hold_what_pandas_reads(sets):
    for path in sets.values():
        cols, df = read_theme_columns(path), read_themes_parquet(path)
        for c in ("theme_id", "name", "text", "keywords"):
            assert cols[c] == df[c].tolist()
    human = read_theme_columns(sets["human"])
    assert human["theme_id"] == ["H1", "H2", "H3", "H4"]
    assert human["keywords"][3] == ["guilt"]
    assert read_theme_columns(sets["llm"])["keywords"] == [[], [], []]


def test_bad_tables_fail_clearly(tmp_path, sets):
    with pytest.raises(InputError, match="file not found"):
        read_theme_columns(tmp_path / "missing.parquet")
    (tmp_path / "notes.parquet").write_text("not parquet")
    with pytest.raises(InputError, match="not a readable parquet file"):
        read_theme_columns(tmp_path / "notes.parquet")
    with pytest.raises(InputError, match="missing columns transcript, segment"):
        read_segment_columns(sets["human"])
    pd.DataFrame({"transcript": ["t1"], "segment": [3], "text": ["Hello"]}).to_parquet(
        tmp_path / "seg.parquet"
    )
    assert read_segment_columns(tmp_path / "seg.parquet") == {
        "transcript": ["t1"],
        "segment": [3],
        "text": ["Hello"],
    }


def test_keywords_computed_apart_are_those_of_this_process(sets, tmp_path):
    tables = {s: read_themes_parquet(p) for s, p in sets.items()}
    texts = tables["llm"]["text"].tolist()
    assert tfidf_terms_apart([texts, ["the and of"]], 3) == [
        top_tfidf_terms(texts, k=3),
        [[]],
    ]
    for root in (None, tmp_path / "cache"):
        got = sets_keywords(tables, 5, root)
        assert got == {s: theme_keywords(t, 5) for s, t in tables.items()}
    # Only the set without keywords is stored, under its texts and k.
    assert keyword_path(tmp_path / "cache", texts, 5).exists()
    assert len(list((tmp_path / "cache" / "keywords").rglob("*.json"))) == 1


def test_a_failed_child_falls_back_to_this_process(monkeypatch, caplog):
    import sys

    texts = ["Money worries about care bills", "Sleep lost to night care"]
    monkeypatch.setattr(sys, "executable", "/bin/false")
    with caplog.at_level("WARNING", logger="themesim"):
        assert tfidf_terms_apart([texts], 2) == [top_tfidf_terms(texts, k=2)]
    assert "the child failed" in caplog.text
