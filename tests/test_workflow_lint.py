"""`snakemake --lint` finds nothing but the per-rule conda/container suggestion.

The project installs one venv for every rule (Makefile, environment.yml), so "Specify a conda
environment or container for each rule." is the only lint we accept.
Any other finding, for a rule or for a Snakefile, fails the test, and so does a lint run that
cannot parse the workflow.
"""

import re
import subprocess
import sys

import pytest
from helpers import REPO

ACCEPTED = "Specify a conda environment or container for each rule."


def findings(out: str) -> list[tuple[str, str]]:
    """(what, lint title) for each finding in `snakemake --lint` text output.

    Every ``Lints for ...:`` block must hold at least one ``* title:`` line; a block without
    one means the output format changed, and that must fail rather than pass silently.
    """
    found = []
    blocks = re.split(r"^Lints for ", out, flags=re.MULTILINE)[1:]
    for block in blocks:
        what = block.split("\n", 1)[0].rstrip(":")
        titles = re.findall(r"^ {4}\* (.+?):?$", block, re.MULTILINE)
        assert titles, f"no lint title under 'Lints for {what}':\n{block[:1000]}"
        found += [(what, t.rstrip(":")) for t in titles]
    return found


def unaccepted(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(what, title) for what, title in found if title != ACCEPTED]


def test_findings_parser_sees_other_lints():
    """The parser finds a non-accepted lint among accepted ones (the check can fail)."""
    out = (
        "Lints for rule embed (line 1, workflow/rules/embed.smk):\n"
        f"    * {ACCEPTED}:\n"
        "      This way, the used software ...\n\n"
        "Lints for snakefile workflow/rules/common.smk:\n"
        '    * Absolute path "/data" in line 3:\n'
        "      Do not define absolute paths ...\n"
        "    * Mixed rules and functions in same snakefile.:\n"
        "      Small one-liner functions ...\n"
    )
    assert unaccepted(findings(out)) == [
        ("snakefile workflow/rules/common.smk", 'Absolute path "/data" in line 3'),
        ("snakefile workflow/rules/common.smk", "Mixed rules and functions in same snakefile."),
    ]
    with pytest.raises(AssertionError):
        findings("Lints for rule x (line 1, a.smk):\n    some changed format\n")


def test_snakemake_lint_clean():
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--lint", "--cores", "1"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    out = proc.stdout + proc.stderr
    found = findings(out)
    # Exit 0 and "Congratulations" when clean; exit 1 when there are lints. Anything else
    # (a parse error, a missing dependency) is a failure, not a clean bill.
    if proc.returncode == 0:
        assert "Congratulations" in out and not found, out[-3000:]
    else:
        assert proc.returncode == 1 and found, out[-3000:]
    assert not unaccepted(found), unaccepted(found)
