"""docs/architecture.md names the files one touches to add a metric, a kind or a plot: each
file it names exists, and the workflow files it says need no edit are not where the code
reads kinds and figures from."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "architecture.md").read_text()


def how_to_add() -> str:
    return DOC[DOC.index("## How to add") :]


def test_every_file_the_how_to_names_exists():
    named = {p for p in re.findall(r"`([^`\s]+/[^`\s]+)`", how_to_add()) if "<" not in p}
    assert len(named) >= 15
    missing = sorted(p for p in named if not (REPO / p).exists())
    assert not missing, missing


def test_no_workflow_file_names_a_kind_or_a_figure():
    """A kind and a small figure need no rule-file edit: the rules ask themesim.inputs and the
    registry, never a kind's or a figure's name."""
    from themesim import kinds
    from themesim.report.figures import METHOD_FIGURES

    rules = "\n".join(p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk"))
    for name in kinds.KINDS:
        assert f'"{name}"' not in rules, name
    for f in METHOD_FIGURES:
        if f.drawn_by == "report_parts":
            assert not re.search(rf"[\"'/]{f.stem}[.\"']", rules), f.stem  # a path or key
