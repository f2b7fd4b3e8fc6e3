"""The method-kind registry (themesim.kinds) is the one source of kinds and keys, held
equal to the schema's here; their defaults are the schema's x-kinds (tests/test_defaults.py)."""

from pathlib import Path

import pytest
import yaml

from themesim import kinds
from themesim.config import prepare
from themesim.errors import InputError
from themesim.kinds.base import COMMON_KEYS
from themesim.schema import check_schema

REPO = Path(__file__).resolve().parents[1]
SCHEMA_PATH = REPO / "workflow" / "schemas" / "config.schema.yaml"
SCHEMA = yaml.safe_load(SCHEMA_PATH.read_text())
METHOD = SCHEMA["properties"]["methods"]["additionalProperties"]["properties"]


def schema_keys(kind: str) -> set[str]:
    return {k for k, p in METHOD.items() if "x-kinds" not in p or kind in p["x-kinds"]}


def test_schema_kind_enum_is_the_registry():
    assert METHOD["kind"]["enum"] == list(kinds.KINDS)
    assert set(kinds.KINDS) == {"sentence_transformer", "tfidf", "precomputed", "abtt", "llm_judge"}


def test_every_x_kinds_names_a_registered_kind():
    for key, p in METHOD.items():
        assert set(p.get("x-kinds", {})) <= set(kinds.KINDS), key


@pytest.mark.parametrize("name", list(kinds.KINDS))
def test_kind_keys_equal_the_schema(name):
    kind = kinds.get(name)
    assert kind.name == name
    assert set(kind.accepts) == schema_keys(name)
    assert set(kind.defaults) <= kind.accepts


def test_common_keys_are_the_schema_keys_of_every_kind():
    every = set(kinds.KINDS)
    assert COMMON_KEYS == {k for k, p in METHOD.items() if set(p.get("x-kinds", every)) == every}


def test_builtin_methods_use_only_their_kinds_keys():
    assert set(kinds.DEFAULT_METHODS) == {
        "minilm", "mpnet", "st5xxl", "tfidf", "minilm+abtt", "judge", "precomputed"
    }  # fmt: skip
    for name, spec in kinds.DEFAULT_METHODS.items():
        assert set(spec) <= kinds.get(spec["kind"]).accepts, name
    assert kinds.DEFAULT_METHODS["mpnet"]["thresholds"] == [0.62]
    assert kinds.DEFAULT_METHODS["mpnet"]["device"] == "cpu"  # the kind's default
    assert kinds.DEFAULT_METHODS["st5xxl"]["dtype"] == "float16"
    assert kinds.DEFAULT_METHODS["minilm+abtt"]["base"] == "minilm"


def test_capabilities_answer_the_workflow_questions():
    has = {name: k for name, k in kinds.KINDS.items()}
    assert [n for n, k in has.items() if k.own_embeddings] == ["sentence_transformer"]
    assert [n for n, k in has.items() if not k.within_set_matrices] == ["precomputed", "llm_judge"]
    assert {n: k.nulls for n, k in has.items() if k.nulls} == {
        "sentence_transformer": "embedded",
        "tfidf": "in_job",
    }
    assert [n for n, k in has.items() if k.runs] == ["sentence_transformer", "tfidf"]
    maps = [n for n, k in has.items() if k.theme_vectors]
    assert maps == ["sentence_transformer", "tfidf", "abtt"]
    assert kinds.get("abtt").embeddings_of("v", {"base": "minilm"}) == "minilm"
    assert kinds.get("tfidf").threshold_range == (0.0, 1.0)
    assert kinds.get("precomputed").threshold_range is None


def test_similarity_spec_holds_no_thresholds():
    judge = kinds.DEFAULT_METHODS["judge"] | {"thresholds": [0.7], "max_tokens": 40}
    spec = kinds.get("llm_judge").similarity_spec(judge)
    assert spec["kind"] == "llm_judge" and spec["max_tokens"] == 40 and "thresholds" not in spec
    assert kinds.get("abtt").similarity_spec({"d": 3, "base": "minilm"}) == {"kind": "abtt", "d": 3}


def test_tfidf_similarity_of_a_hand_computed_pair():
    import pandas as pd

    a = pd.DataFrame({"text": ["trust staff", "cost"]})
    b = pd.DataFrame({"text": ["staff trust", "waiting times"]})
    S = kinds.get("tfidf").similarity_for({}, a, b)
    assert S.shape == (2, 2)
    assert S[0, 0] == pytest.approx(1.0)  # same words, same vector
    assert S[1, 0] == pytest.approx(0.0) and S[1, 1] == pytest.approx(0.0)


def _study(tmp_path, methods):
    for s in ("a", "b"):
        (tmp_path / f"{s}.csv").write_text("name,description\nTrust,staff trust\nCost,money\n")
    config = {"theme_sets": [str(tmp_path / "a.csv"), str(tmp_path / "b.csv")], "methods": methods}
    check_schema(config, SCHEMA_PATH)
    return prepare(config)


def test_key_of_another_kind_is_a_one_line_config_error(tmp_path):
    with pytest.raises(InputError) as e:
        _study(tmp_path, {"tf": {"kind": "tfidf", "base": "minilm"}})
    msg = str(e.value)
    assert "config methods.tf.base" in msg and "'base' is a setting of kind abtt" in msg
    assert "\n" not in msg


def test_a_method_of_a_kind_gets_that_kinds_defaults(tmp_path):
    study = _study(tmp_path, {"tf": {"kind": "tfidf"}, "j": {"kind": "llm_judge", "active": False}})
    assert study.methods["tf"] == {
        "kind": "tfidf",
        "analyzer": "word",
        "ngram_range": None,
        "assign_threshold": 0.08,
        "description": "tf (tfidf)",
        "active": True,
        "comparisons": None,
    }
    assert study.thresholds == {"tf": [0.2]}  # apart: they reach the metrics jobs only
    assert study.method_pairs("tf") == [("a", "b"), ("a", "a"), ("b", "b")]
    assert study.methods_with("runs") == ["tf"]


def test_config_readme_table_names_each_keys_kinds():
    """config/README.md's per-method table: every key, and the kinds it applies to."""
    import re

    text = (REPO / "config" / "README.md").read_text()
    table = text.split("Per method:")[1].split("\n\n")[1]
    applies: dict[str, set] = {}
    for row in table.splitlines()[2:]:
        first, where = row.split("|")[1:3]
        for key in re.findall(r"`([a-z_]+)`", first):
            named = set(kinds.KINDS) if where.strip() == "all" else set(where.strip().split(", "))
            applies.setdefault(key, set()).update(named)
    assert applies == {k: {n for n, kd in kinds.KINDS.items() if k in kd.accepts} for k in METHOD}


def test_demo_config_states_only_what_differs_from_the_defaults():
    """config/config.yaml writes no setting at its default (the schema's, or a built-in
    method's): a value restated there would hide which ones the demo chose."""
    from themesim.defaults import SCHEMA_PATH

    demo = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    filled = {"theme_sets": demo["theme_sets"], "methods": {}}
    check_schema(filled, SCHEMA_PATH, defaults=True)

    def restated(given, default, where):
        if isinstance(given, dict) and isinstance(default, dict):
            return [
                r
                for k, v in given.items()
                if k in default
                for r in restated(v, default[k], f"{where}.{k}")
            ]
        return [where] if given == default else []

    given = {k: v for k, v in demo.items() if k not in ("theme_sets", "methods")}
    found = [r for k, v in given.items() for r in restated(v, filled.get(k), k)]
    for name, spec in demo["methods"].items():
        builtin = kinds.DEFAULT_METHODS.get(name, {})
        found += [f"methods.{name}.{k}" for k, v in spec.items() if builtin.get(k) == v]
    assert not found, found
    # The demo's methods: five built-in ones, the judge on one comparison (data/demo/README.md).
    assert list(demo["methods"]) == ["minilm", "mpnet", "minilm+abtt", "tfidf", "judge"]
    assert demo["methods"]["judge"] == {"comparisons": ["human vs llm_partial"]}


def _segments(texts):
    import pandas as pd

    return pd.DataFrame(
        {"transcript": ["t1"] * len(texts), "segment": list(range(len(texts))), "text": texts}
    )


def test_tfidf_segment_scores_of_a_hand_computed_pair():
    import pandas as pd

    themes = pd.DataFrame({"theme_id": ["x", "y"], "text": ["staff trust", "cost"]})
    S = kinds.get("tfidf").segment_scores({}, themes, _segments(["trust staff", "waiting times"]))
    assert S.shape == (2, 2)
    assert S[0, 0] == pytest.approx(1.0)  # same words, same vector
    assert S[0, 1] == S[1, 0] == S[1, 1] == pytest.approx(0.0)


def test_embedding_segment_scores_follow_the_theme_and_segment_order(tmp_path):
    import numpy as np
    import pandas as pd

    from themesim.embed.vectors import write_vector_table

    theme_file, seg_file = tmp_path / "themes.parquet", tmp_path / "segments.parquet"
    # Files in another order than the tables: rows must be looked up by id, not position.
    write_vector_table(theme_file, {"theme_id": ["y", "x"]}, np.array([[0.0, 1.0], [1.0, 0.0]]), {})
    write_vector_table(
        seg_file,
        {"transcript": ["t1", "t1", "t1"], "segment": [2, 0, 1]},
        np.array([[0.6, 0.8], [1.0, 0.0], [0.0, 1.0]]),
        {},
    )
    themes = pd.DataFrame({"theme_id": ["x", "y"], "text": ["a", "b"]})
    S = kinds.get("sentence_transformer").segment_scores(
        {}, themes, _segments(["s0", "s1", "s2"]), str(theme_file), str(seg_file)
    )
    # x = (1, 0), y = (0, 1); segments 0 = (1, 0), 1 = (0, 1), 2 = (0.6, 0.8).
    np.testing.assert_allclose(S, [[1.0, 0.0, 0.6], [0.0, 1.0, 0.8]], atol=1e-6)
    assert kinds.get("sentence_transformer").segment_scores({}, themes, _segments(["s"])) is None


@pytest.mark.parametrize("kind", ["abtt", "llm_judge", "precomputed"])
def test_kinds_without_segment_scores_assign_nothing(kind, tmp_path):
    import pandas as pd

    themes = pd.DataFrame({"theme_id": ["x"], "text": ["a"]})
    assert kinds.get(kind).segment_scores({}, themes, _segments(["s"]), "t", "s") is None


def test_no_kind_literal_outside_the_registry():
    import re

    src = REPO / "src" / "themesim"
    pattern = re.compile(r"""kind\w*\)?\s*[!=]=\s*["']""")
    literal = re.compile(r"""["'](sentence_transformer|tfidf)["']\s*(==|in)""")
    offenders = [
        f"{p.relative_to(src)}:{n}"
        for p in src.rglob("*.py")
        if "kinds" not in p.relative_to(src).parts
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line) or literal.search(line)
    ]
    assert not offenders, offenders
