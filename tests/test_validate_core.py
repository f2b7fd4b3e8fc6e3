"""The validation suite's summary row (validate/core.py): how a measured property is judged."""

import ast
import math
from pathlib import Path

import pytest

from themesim.validate import core
from themesim.validate.core import Scope, row

AT = Scope("a", "d")


def test_a_judged_row_needs_a_finite_nominal():
    """Regression: a type-I error row with nominal NaN was judged `value − 2 se <= NaN`,
    i.e. failed whatever its value; a coverage row's nominal was never checked."""
    for prop in ("type1_error", "fdr", "coverage"):
        with pytest.raises(ValueError, match=f"a {prop} row needs a finite nominal"):
            row(Scope("a", "d", n_a=10, n_b=10), "q", "p", prop, 0.01, 100)
        with pytest.raises(ValueError, match="finite nominal"):
            row(AT, "q", "p", prop, 0.01, 100, nominal=math.inf)
    # properties that are not judged against a level need none
    assert math.isnan(row(AT, "q", "p", "mean_width", 0.3, 100)["nominal"])
    assert row(AT, "q", "p", "contains_estimate", 1.0, 100)["passes"] is True


def test_type1_error_and_coverage_are_judged_by_hand():
    # 0.07 at 400 draws: se = sqrt(0.07 · 0.93 / 400) = 0.01276; 0.07 − 0.0255 = 0.0445 <= 0.05
    r = row(Scope("a", "d", n_a=10, n_b=10), "q", "p", "type1_error", 0.07, 400, nominal=0.05)
    assert r["mc_se"] == pytest.approx(math.sqrt(0.07 * 0.93 / 400)) and r["passes"] is True
    # 0.08 at 400: 0.08 − 2 · 0.01356 = 0.0529 > 0.05
    assert not row(AT, "q", "p", "type1_error", 0.08, 400, nominal=0.05)["passes"]
    # coverage 0.90 at 100 draws: 0.90 + 2 · 0.03 = 0.96 >= 0.93; at 1000: 0.919 < 0.93
    assert row(AT, "q", "p", "coverage", 0.90, 100, nominal=0.95)["passes"] is True
    assert row(AT, "q", "p", "coverage", 0.90, 1000, nominal=0.95)["passes"] is False
    # sets under 6 themes: shown, not judged
    small = row(Scope("a", "d", n_a=4, n_b=10), "q", "p", "coverage", 0.5, 100, nominal=0.95)
    assert small["required"] is False and math.isnan(small["passes"])


def test_every_area_gives_its_judged_rows_a_nominal():
    """Each call of row(...) in the areas with a literal coverage, type1_error or fdr
    property passes nominal= (or **kwargs that the area fills); the ValueError above would
    stop the suite otherwise."""
    root = Path(core.__file__).parent
    seen = 0
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "row"):
                continue
            if len(node.args) < 4 or not isinstance(node.args[3], ast.Constant):
                continue
            if node.args[3].value in core.JUDGED_AGAINST_NOMINAL:
                seen += 1
                assert "nominal" in [k.arg for k in node.keywords], (path.name, node.lineno)
    assert seen >= 10


def test_the_verdicts_interval_is_held_to_a_band_an_exact_interval_to_its_floor():
    """The verdicts' (1 - 2 alpha) interval fails above 0.94 (power lost), as below 0.88;
    the equivalence area's exact paired interval is held only to the floor."""

    def judged(area, value):
        return row(Scope(area, "d"), "difference", "p", "coverage_tost_level", value, 1000,
                   nominal=0.9, mc_se=0.0)["passes"]  # fmt: skip

    assert [judged("verdicts", v) for v in (0.87, 0.9, 0.95)] == [False, True, False]
    assert [judged("equivalence", v) for v in (0.87, 0.9, 0.99)] == [False, True, True]
