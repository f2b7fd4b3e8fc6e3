"""Each default and each table's column list has one source. A default is the schema's
(workflow/schemas/config.schema.yaml, read by themesim.defaults): these tests fail when the
package writes one a second time, instead of holding copies equal."""

import ast
import dataclasses
import inspect
import re
from pathlib import Path

import pytest

from themesim import defaults, kinds
from themesim.coder.llm import CoderLLMSettings
from themesim.llm.generate import GenerateSettings
from themesim.llm.judge_settings import JudgeSettings
from themesim.llm.paraphrase import ParaphraseSettings
from themesim.llm.session import EndpointSettings
from themesim.metrics import columns
from themesim.report import tables

SRC = Path(__file__).resolve().parents[1] / "src" / "themesim"

# Each LLM caller's settings and the schema section that gives their defaults.
CALLERS = {
    JudgeSettings: defaults.kind_defaults("llm_judge"),
    GenerateSettings: defaults.section_defaults("generate_themes"),
    ParaphraseSettings: defaults.section_defaults("ceiling"),
    CoderLLMSettings: defaults.section_defaults("grounding", "coder", "llm"),
}
# Module-level names of Python-only defaults, of no config key: the coder's rule per kind
# (grounding.coder.rule null means "the kind's").
NOT_CONFIG = {("coder/settings.py", "DEFAULT_RULE")}


def _valued(cls) -> set[str]:
    """The fields a class body gives a value of its own."""
    body = ast.parse(inspect.getsource(cls)).body[0].body
    return {
        n.target.id
        for n in body
        if isinstance(n, ast.AnnAssign) and n.value is not None and isinstance(n.target, ast.Name)
    }


@pytest.mark.parametrize("cls", list(CALLERS), ids=lambda c: c.__name__)
def test_an_llm_callers_defaults_are_its_schema_sections(cls):
    given = CALLERS[cls]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    mine = set(given) & set(fields)
    assert {"prompt", "timeout_s", "max_retries", "n_ctx", "base_url"} <= mine
    for name in mine:
        assert fields[name].default == given[name], name
    # no class of its own or its base writes one of them: the schema's is the only value
    # (EndpointSettings.threads is the fallback of the callers whose section has no threads)
    assert not (_valued(cls) & mine)
    assert not (_valued(EndpointSettings) & mine) - {"threads"}


def test_the_coder_and_the_schema_agree_on_timeout_s():
    """They disagreed: 600 s in the schema, 120 s in CoderLLMSettings."""
    assert CoderLLMSettings().timeout_s == 600.0 == CALLERS[CoderLLMSettings]["timeout_s"]
    assert JudgeSettings().timeout_s == 120.0  # a judge's own default (its x-kinds)


def test_a_class_that_writes_a_schema_default_again_is_refused():
    with pytest.raises(TypeError, match="timeout_s has a default of its own"):

        @dataclasses.dataclass(frozen=True)
        @defaults.schema_fields("ceiling")
        class Twice(EndpointSettings):
            timeout_s: float = 600.0


def test_no_module_writes_a_default_dict_of_its_own():
    """DEFAULT_* and *_DEFAULTS are read from the schema, never literals beside it."""
    named = re.compile(r"(^DEFAULT_|_DEFAULTS?$|_DEFAULT$)")
    literal = []
    for path in sorted(SRC.rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if not (isinstance(t, ast.Name) and named.search(t.id)):
                    continue
                try:
                    ast.literal_eval(node.value)
                except ValueError:
                    continue
                if (where, t.id) not in NOT_CONFIG:
                    literal.append(f"{where}: {t.id}")
    assert literal == []


# Library functions whose keyword defaults are settings of a schema section.
FUNCTION_SETTINGS = {
    "metrics/sets/transport.py": ("metrics", "transport"),
    "metrics/sets/quality.py": ("metrics", "quality"),
    "metrics/sets/nulls.py": ("metrics", "null_model"),
    "metrics/sets/scales.py": ("metrics",),
    "metrics/verdicts/equivalence.py": ("equivalence",),
    "metrics/calibration.py": ("calibration", "bootstrap"),
    "coder/assign.py": ("grounding", "coder"),
}


@pytest.mark.parametrize("module", list(FUNCTION_SETTINGS))
def test_no_function_writes_a_settings_default_again(module):
    keys = set(defaults.section_defaults(*FUNCTION_SETTINGS[module]))
    literal = []
    for fn in ast.walk(ast.parse((SRC / module).read_text(encoding="utf-8"))):
        if not isinstance(fn, ast.FunctionDef):
            continue
        args = fn.args.posonlyargs + fn.args.args
        given = list(zip(args[len(args) - len(fn.args.defaults) :], fn.args.defaults, strict=True))
        given += [(a, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True) if d]
        for arg, value in given:
            if arg.arg in keys and isinstance(value, ast.Constant) and value.value is not None:
                literal.append(f"{fn.name}({arg.arg}={value.value!r})")
    assert literal == []


def test_a_kinds_defaults_are_its_x_kinds():
    for name, kind in kinds.KINDS.items():
        assert kind.defaults == defaults.kind_defaults(name)
    with pytest.raises(TypeError, match="the schema's x-kinds"):  # no kind writes its own

        class Twice(kinds.Kind):
            name = "tfidf"
            defaults = {"thresholds": [0.2]}

    assert "Z_DEFAULT_THRESHOLD" not in (SRC / "metrics" / "sets" / "scales.py").read_text()


def test_section_defaults_follow_the_schema():
    schema = defaults.schema()
    llm = schema["properties"]["grounding"]["properties"]["coder"]["properties"]["llm"]
    assert defaults.section_defaults("grounding", "coder", "llm") == {
        k: p["default"] for k, p in llm["properties"].items()
    }
    # a section without a default of its own gives its keys' defaults
    assert defaults.section_defaults("metrics")["bootstrap"] == {"n": 1000, "seed": 0}
    assert defaults.default("ceiling") == {"active": False, "k": 5}
    got = defaults.section_defaults("archive")
    got["authors"].append("x")  # each call is a fresh copy
    assert defaults.section_defaults("archive")["authors"] == []


def test_the_schema_is_read_once_per_process(tmp_path, monkeypatch):
    schema = tmp_path / "config.schema.yaml"
    schema.write_text("properties:\n  op: {type: string, default: ge}\n")
    monkeypatch.setattr(defaults, "SCHEMA_PATH", schema)
    defaults.schema.cache_clear()
    try:
        assert defaults.section_defaults() == {"op": "ge"}
        schema.write_text("properties:\n  op: {type: string, default: gt}\n")
        assert defaults.section_defaults() == {"op": "ge"}  # read once
        defaults.schema.cache_clear()
        schema.write_text("properties:\n  op: {type: string, default: gt}\n  x: {default: 1}\n")
        assert defaults.section_defaults() == {"op": "gt", "x": 1}
    finally:
        defaults.schema.cache_clear()


def test_the_report_reads_the_columns_the_metrics_job_writes():
    from themesim.metrics.sets import coverage

    assert tables.COMPARISON_COLUMNS is columns.COMPARISON_COLUMNS
    assert coverage.METRIC_COLUMNS is columns.METRIC_COLUMNS
    assert columns.COMPARISON_COLUMNS[:5] == ["method", "set_a", "set_b", "threshold", "op"]
    assert columns.THEME_KEY_COLUMNS[: len(columns.THEME_COLUMNS)] == columns.THEME_COLUMNS
    # a score of one pair has exactly the coverage family's columns
    import numpy as np

    df = coverage.score(np.array([[0.9, 0.1], [0.2, 0.8]]), [0.5])
    assert list(df.columns) == ["threshold", *columns.METRIC_COLUMNS]
