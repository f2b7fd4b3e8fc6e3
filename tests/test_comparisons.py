"""A method's `comparisons:` (themesim.comparisons): the study's comparisons it runs."""

from pathlib import Path

import pytest
import yaml

from themesim.config import prepare
from themesim.errors import InputError
from themesim.schema import check_schema

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def _study(tmp_path, comparisons, all_pairs=False, **more):
    for s in ("a", "b", "c"):
        (tmp_path / f"{s}.csv").write_text("name,description\nTrust,staff trust\nCost,money\n")
    config = {
        "theme_sets": [str(tmp_path / f"{s}.csv") for s in ("a", "b", "c")],
        "comparisons": {"all_pairs": all_pairs},
        "methods": {
            "tf": {"kind": "tfidf", "comparisons": comparisons} | more,
            "all": {"kind": "tfidf"},
        },
    }
    check_schema(config, SCHEMA)
    return prepare(config)


def test_null_is_every_comparison(tmp_path):
    study = _study(tmp_path, None)
    assert study.pairs_for("tf") == study.pairs == [("a", "b"), ("a", "c")]
    assert study.sets_for("tf") == ["a", "b", "c"]
    assert study.restricted == {}


def test_both_forms_name_the_study_pairs_in_study_order(tmp_path):
    study = _study(tmp_path, [["b", "c"], "a vs c"], all_pairs=True)
    assert study.pairs_for("tf") == [("a", "c"), ("b", "c")]
    assert study.sets_for("tf") == ["a", "b", "c"]
    assert study.pairs_for("all") == [("a", "b"), ("a", "c"), ("b", "c")]
    study = _study(tmp_path, ["a  vs  c"])
    assert study.pairs_for("tf") == [("a", "c")]
    assert study.sets_for("tf") == ["a", "c"]  # b is in none of its comparisons
    # tfidf has within-set matrices: only of its own sets
    assert study.method_pairs("tf") == [("a", "c"), ("a", "a"), ("c", "c")]
    assert study.method_pairs("all") == [("a", "b"), ("a", "c"), ("a", "a"), ("b", "b"), ("c", "c")]


def _error(tmp_path, comparisons, **kw) -> str:
    with pytest.raises(InputError) as e:
        _study(tmp_path, comparisons, **kw)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_unknown_set_is_a_one_line_error_naming_method_entry_and_the_study_comparisons(tmp_path):
    msg = _error(tmp_path, ["a vs bb"])
    assert "config methods.tf.comparisons[0] (a vs bb)" in msg
    assert "'bb' is not a theme set of the study (did you mean 'b'?)" in msg
    assert "(a vs b, a vs c)" in msg


def test_comparison_the_study_does_not_make(tmp_path):
    msg = _error(tmp_path, ["a vs b", "b vs c"])  # reference vs each: no b vs c
    assert "config methods.tf.comparisons[1] (b vs c)" in msg
    assert "is not a comparison of the study" in msg and "(a vs b, a vs c)" in msg
    msg = _error(tmp_path, ["c vs a"])
    assert "the study compares a vs c, not c vs a" in msg


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        ([], "lists no comparison"),
        (["a versus b"], "'a versus b' is not a comparison"),
        ([["a", "b", "c"]], "is not a comparison"),
        (["a vs b", ["a", "b"]], "is listed twice"),
    ],
)
def test_malformed_entries(tmp_path, entries, problem):
    assert problem in _error(tmp_path, entries)


def test_schema_rejects_a_mapping(tmp_path):
    with pytest.raises(InputError) as e:
        _study(tmp_path, {"a": "b"})
    assert "config methods.tf.comparisons" in str(e.value)


def test_demo_config_runs_the_judge_on_one_comparison():
    from themesim.kinds import method_defaults

    demo = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    judge = method_defaults("judge", demo["methods"]["judge"])
    assert judge["kind"] == "llm_judge" and judge.get("active", True)
    assert judge["comparisons"] == ["human vs llm_partial"]
