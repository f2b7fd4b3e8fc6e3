"""Each default and each table's column list has one source in the code; the schema's
defaults (what a config without the key gets) are held equal to it here."""

import dataclasses
from pathlib import Path

import pytest
import yaml

from themesim.coder.settings import CODER_DEFAULTS, LLM_DEFAULTS
from themesim.config import ARCHIVE_DEFAULTS, CEILING_DEFAULTS, GROUNDING_DEFAULTS, PLOTS_DEFAULTS
from themesim.llm.paraphrase import ParaphraseSettings
from themesim.metrics import columns
from themesim.report import tables

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())


def schema_defaults(*path: str) -> dict:
    """key -> default of the properties of a schema section (those that have one)."""
    node = SCHEMA
    for key in path:
        node = node["properties"][key]
    return {k: p["default"] for k, p in node["properties"].items() if "default" in p}


@pytest.mark.parametrize(
    "path, source",
    [
        (("plots",), PLOTS_DEFAULTS),
        (("archive",), ARCHIVE_DEFAULTS),
        (("grounding",), GROUNDING_DEFAULTS | {"coder": {}}),
        (("grounding", "coder"), CODER_DEFAULTS | {"llm": {}}),
        (("grounding", "coder", "llm"), LLM_DEFAULTS),
    ],
    ids=lambda x: ".".join(x) if isinstance(x, tuple) else "",
)
def test_schema_defaults_equal_the_code(path, source):
    assert schema_defaults(*path) == source


def test_ceiling_defaults_are_its_own_and_the_paraphrase_settings():
    fields = {f.name: f.default for f in dataclasses.fields(ParaphraseSettings)}
    given = schema_defaults("ceiling")
    assert {k: given[k] for k in CEILING_DEFAULTS} == CEILING_DEFAULTS
    rest = set(given) - set(CEILING_DEFAULTS)
    assert {"prompt", "temperature", "max_tokens", "timeout_s"} <= rest
    assert {k: given[k] for k in rest} == {k: fields[k] for k in rest}
    assert SCHEMA["properties"]["ceiling"]["default"] == CEILING_DEFAULTS


def test_the_report_reads_the_columns_the_metrics_job_writes():
    from themesim.metrics import coverage

    assert tables.COMPARISON_COLUMNS is columns.COMPARISON_COLUMNS
    assert coverage.METRIC_COLUMNS is columns.METRIC_COLUMNS
    assert columns.COMPARISON_COLUMNS[:5] == ["method", "set_a", "set_b", "threshold", "op"]
    assert columns.THEME_KEY_COLUMNS[: len(columns.THEME_COLUMNS)] == columns.THEME_COLUMNS
    # a score of one pair has exactly the coverage family's columns
    import numpy as np

    df = coverage.score(np.array([[0.9, 0.1], [0.2, 0.8]]), [0.5])
    assert list(df.columns) == ["threshold", *columns.METRIC_COLUMNS]
