"""The workflow checks its config once at parse time: check_schema(defaults=True) words the
first problem in one line and fills in the schema's defaults, as Snakemake's `validate` did
after it (the report and the archive keep the config with its defaults)."""

import copy
import json
from pathlib import Path

import pytest
import yaml

from themesim.errors import InputError
from themesim.schema import check_schema

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
DEMO = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


@pytest.mark.parametrize(
    "config",
    [
        DEMO,
        {"theme_sets": ["a.csv", "b.csv"], "methods": {"tfidf": {"kind": "tfidf"}}},
        DEMO | {"grounding": {"coder": {"kind": "llm", "llm": {"threshold": 0.3}}}},
    ],
    ids=["demo", "minimal", "nested"],
)
def test_defaults_are_filled_as_snakemake_validate_fills_them(config):
    from snakemake.utils import validate

    ours, theirs = copy.deepcopy(config), copy.deepcopy(config)
    check_schema(ours, SCHEMA, defaults=True)
    validate(theirs, str(SCHEMA))
    assert json.dumps(ours) == json.dumps(theirs)  # the same keys, values and order
    assert ours != config  # something was filled in
    assert ours["archive"] == {"confidential": False, "authors": []}


def test_without_defaults_the_config_is_left_as_it_is():
    config = copy.deepcopy(DEMO)
    check_schema(config, SCHEMA)
    assert config == DEMO


def test_a_wrong_type_is_one_line_before_any_default_is_filled():
    config = copy.deepcopy(DEMO) | {"grounding": 5}
    with pytest.raises(InputError, match=r"^config grounding: 5 is not of type object"):
        check_schema(config, SCHEMA, defaults=True)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"theme_sets": []}, "config theme_sets: has 0 item(s) but needs at least 1. "
         "List at least 1 (see config/README.md)"),
        ({"sweep": {"step": "1e-2"}}, "config sweep.step: '1e-2' is text, not a number (YAML "
         "reads e-notation without a decimal point as text). Write it as 1.0e-2"),
        ({"sweep": {"step": "0.01"}}, "config sweep.step: '0.01' is text, not a number. "
         "Remove the quotes"),
    ],
)  # fmt: skip
def test_a_schema_error_says_what_is_wrong_at_the_key_and_what_to_do(change, message):
    with pytest.raises(InputError) as e:
        check_schema(copy.deepcopy(DEMO) | change, SCHEMA)
    assert str(e.value) == message


def test_the_snakefile_checks_the_config_once():
    text = (REPO / "Snakefile").read_text()
    assert text.count("exit_on_error(check_schema,") == 1
    assert "validate(" not in text and "defaults=True" in text


def test_did_you_mean_ignores_case_and_spacing_and_names_the_choice_as_given():
    """One "did you mean" for every error (schema keys and values, set, method, user and
    theme names): the closest choice as the user wrote it, or nothing when none is close."""
    from themesim.errors import did_you_mean

    themes = ["Money  Worries", "Work and caring"]
    assert did_you_mean("money worries", themes) == " (did you mean 'Money  Worries'?)"
    assert did_you_mean("treshold", ["thresholds", "op"]) == " (did you mean 'thresholds'?)"
    assert did_you_mean("zzz", themes) == ""
