"""Run-time contract flags (metrics/contract.py): the `contract` column of comparisons.csv
and grounding.csv, and the note a report prints beside a flagged row."""

import numpy as np

from themesim.metrics.comparison import Settings, comparison_rows
from themesim.metrics.contract import (
    contract_flags,
    contract_note,
    grounding_flags,
    near_duplicate_pairs,
)


def test_flags_by_hand():
    W = np.eye(6)
    W[1, 4] = W[4, 1] = 0.8
    assert near_duplicate_pairs(W, 0.6, "ge", 0.15) == [(1, 4)]
    assert near_duplicate_pairs(W, 0.7, "ge", 0.15) == []
    flags = contract_flags(5, 8, [0.6, 0.9], [3, 0], W_b=W, gamma=0.15)
    assert flags == ["few_themes;near_duplicates", "few_themes;no_match"]
    assert contract_flags(6, 6, [0.6], [2]) == [""]
    assert grounding_flags(3) == "few_transcripts" and grounding_flags(4) == ""
    assert contract_note("") == "" and contract_note(float("nan")) == ""
    note = contract_note("few_themes;no_match")
    assert note.startswith("Outside what the validation suite certified:")
    assert "fewer than 6 themes" in note and "no match" in note


def test_demo_rows_carry_their_flags():
    # the demo with TF-IDF (its config's threshold 0.2): llm_partial has 5 themes,
    # qwen_run3 two near-duplicates ("Relationship Dynamics" and "Caring and Support" at
    # 0.66); the human analyst's and the paraphrases' rows are within the contract.
    from themesim.io.themes import read_theme_file
    from themesim.kinds import DEFAULT_METHODS
    from themesim.steps.similarity import similarity_for

    spec = DEFAULT_METHODS["tfidf"]
    human = read_theme_file("data/demo/themes/human.csv")
    want = {
        "llm_partial.md": "few_themes",
        "qwen_run3.csv": "near_duplicates",
        "llm_paraphrase.yaml": "",
    }
    for name, flag in want.items():
        b = read_theme_file(f"data/demo/themes/{name}")
        rows, _ = comparison_rows(
            similarity_for(spec, human, b),
            Settings(thresholds=[0.2]),
            W_a=similarity_for(spec, human, human),
            W_b=similarity_for(spec, b, b),
        )
        assert rows["contract"].tolist() == [flag], name
