"""Config values given with `snakemake --config`: nested numbers arrive as text."""

import copy
import re

import pytest
from helpers import REPO, make_study, snakemake, write_config

from themesim.errors import InputError
from themesim.schema import check_schema, coerce_cli_values

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
BASE = {
    "theme_sets": ["a.csv", "b.csv"],
    "methods": {"minilm": {"kind": "sentence_transformer", "thresholds": [0.5]}},
}


def merged(cli):
    """The config as Snakemake merges a config file and --config (nested dicts merge)."""
    from snakemake.utils import update_config

    config = copy.deepcopy(BASE)
    update_config(config, copy.deepcopy(cli))
    return config


def test_nested_numbers_booleans_and_nulls_from_the_command_line_are_read_as_such():
    cli = {
        "methods": {
            "minilm": {
                "thresholds": ["0.6", "calibrated", "-1"],
                "batch_size": "32",
                "active": "false",
                "assign_threshold": "null",
                "device": "1",  # a string where the schema wants one: kept
            }
        }
    }
    config = merged(cli)
    notes = coerce_cli_values(config, cli, SCHEMA)
    m = config["methods"]["minilm"]
    assert m["thresholds"] == [0.6, "calibrated", -1] and isinstance(m["thresholds"][2], int)
    assert (m["batch_size"], m["active"], m["assign_threshold"], m["device"]) == (
        32,
        False,
        None,
        "1",
    )
    assert m["kind"] == "sentence_transformer"  # from the file, untouched
    assert notes[0] == (
        "config methods.minilm.thresholds[0]: '0.6' from the command line read as 0.6 "
        "(Snakemake's --config passes nested values as text)"
    )
    assert len(notes) == 5  # 0.6, -1, 32, false, null
    check_schema(config, SCHEMA)


def test_a_quoted_number_in_a_config_file_stays_an_error():
    config = merged({"methods": {"minilm": {"thresholds": ["0.6"]}}})
    assert coerce_cli_values(config, {}, SCHEMA) == []
    with pytest.raises(InputError, match=r"'0.6' is not a number or 'calibrated'"):
        check_schema(config, SCHEMA)


def test_a_bad_value_from_the_command_line_names_the_cause_and_the_configfile_way():
    cli = {"methods": {"minilm": {"thresholds": ["sixty"]}}}
    config = merged(cli)
    assert coerce_cli_values(config, cli, SCHEMA) == []
    with pytest.raises(InputError) as err:
        check_schema(config, SCHEMA, cli)
    msg = str(err.value)
    assert msg.startswith(
        "config methods.minilm.thresholds[0]: 'sixty' is not a number or 'calibrated'"
    )
    assert "If it came from --config, which passes nested values as text" in msg
    assert "--configfile config/config.yaml overrides.yaml" in msg


def test_the_readme_threshold_override_runs(tmp_path):
    """Regression (issue 24.13): `--config 'methods={"minilm": {"thresholds": [0.6]}}'`
    stopped at "thresholds[0]: '0.6' is not valid under any of the given schemas"."""
    root = make_study(tmp_path)
    proc = snakemake(
        root, "-n", "--cores", "1", "--config", 'methods={"minilm": {"thresholds": [0.6]}}'
    )
    out = proc.stdout + proc.stderr
    assert "config methods.minilm.thresholds[0]: '0.6' from the command line read as 0.6" in out
    assert "metrics" in proc.stdout


def test_a_number_quoted_in_a_configfile_override_is_read_and_one_in_the_study_file_stops(
    tmp_path,
):
    """The command line's values are what `config` holds before the Snakefile's configfile
    directive (--configfile files and --config alike); the workflow's own file stays strict."""
    root = make_study(tmp_path)
    (root / "over.yaml").write_text('methods:\n  minilm:\n    thresholds: ["0.6"]\n')
    proc = snakemake(root, "-n", "--cores", "1", "--configfile", str(root / "over.yaml"))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "config methods.minilm.thresholds[0]: '0.6' from the command line read as 0.6" in out

    write_config(root, ["0.5"])
    proc = snakemake(root, "-n", "--cores", "1", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "config methods.minilm.thresholds[0]: '0.5' is not a number or 'calibrated'" in out
    assert "given on the command line" not in out


def test_the_workflow_reads_only_documented_workflow_attributes():
    """The Snakefile and rule files use `workflow.basedir` and `workflow.cores`, as
    Snakemake's docs do; nothing of its internals (config_settings, resource_settings, ...)."""
    documented = {"basedir", "current_basedir", "source_path", "snakefile", "cores"}
    used = set()
    for path in [REPO / "Snakefile", *(REPO / "workflow" / "rules").glob("*.smk")]:
        used |= set(re.findall(r"\bworkflow\.(\w+)", path.read_text()))
    assert used and used <= documented, used - documented


def test_a_key_given_twice_in_the_config_file_is_refused_with_both_lines(tmp_path):
    """PyYAML, as Snakemake reads config/config.yaml, keeps the last of two equal keys: the
    first `thresholds` would be dropped without a word. Refused at parse time, in one line."""
    root = make_study(tmp_path)
    path = root / "config" / "config.yaml"
    text = path.read_text()
    assert "  tfidf:\n    kind: tfidf\n    thresholds:\n    - 0.2\n" in text
    text = text.replace(
        "  tfidf:\n    kind: tfidf\n", "  tfidf:\n    kind: tfidf\n    thresholds: [0.4]\n"
    )
    path.write_text(text)
    line = text.splitlines().index("    thresholds: [0.4]") + 1
    proc = snakemake(root, "-n", "--cores", "1", check=False)
    assert proc.returncode != 0
    last = [x for x in proc.stderr.splitlines() if x.strip()][-1]
    assert last == (
        f"Error: config/config.yaml, lines {line} and {line + 1}: key 'thresholds' is given "
        "twice in one mapping, and YAML would keep only the second. Keep one of them (or "
        "merge their values into one)"
    ), proc.stderr[-2000:]


def test_yaml_merge_keys_and_keys_of_other_mappings_are_not_repeats():
    from themesim.io.yaml_keys import load_unique

    text = "base: &b {kind: tfidf, thresholds: [0.2]}\nm:\n  <<: *b\n  thresholds: [0.3]\n"
    assert load_unique(text, "x.yaml")["m"] == {"kind": "tfidf", "thresholds": [0.3]}
    with pytest.raises(InputError, match="x.yaml, lines 1 and 3: key '1.0' is given twice"):
        load_unique("1: a\nb: c\n1.0: d\n", "x.yaml")  # 1 and 1.0: one key to Python


def test_identical_theme_files_are_noted_in_the_log(tmp_path):
    """Two sets whose files hold the very same bytes (an analyst's file copied as another's)
    run, with one line in the log at parse time; a file listed twice for two coders' coded
    segments of one code book is two sets, without a note."""
    from themesim.config import prepare

    root = make_study(tmp_path)
    copy = root / "data" / "human_copy.csv"
    copy.write_bytes((root / "data" / "human.csv").read_bytes())
    write_config(
        root,
        [0.5],
        theme_sets=[{"path": "data/human.csv"}, {"path": "data/human_copy.csv"},
                    {"path": "data/llm.yaml", "name": "llm"}],
        methods={"tfidf": {"kind": "tfidf", "thresholds": [0.2]}},
    )  # fmt: skip
    proc = snakemake(root, "-n", "--cores", "1")
    note = (
        "theme sets 'human' (data/human.csv) and 'human_copy' (data/human_copy.csv) are files "
        "with the very same content: if one is a copy of the other, their agreement of 1 says "
        "nothing about two analysts"
    )
    assert (proc.stdout + proc.stderr).count(note) == 1
    sets = [{"path": str(root / "data" / "human.csv"), "name": "h1", "segments": str(p)}
            for p in (root / "a.csv", root / "b.csv")]  # fmt: skip
    for p in (root / "a.csv", root / "b.csv"):
        p.write_text("document,theme,text\n")
    sets[1]["name"] = "h2"
    study = prepare({"theme_sets": sets, "methods": {"tfidf": {"kind": "tfidf"}}})
    assert list(study.sets) == ["h1", "h2"] and study.notes == []
