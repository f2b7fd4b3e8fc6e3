"""`snakemake --lint` finds nothing but the per-rule conda/container suggestion.

The project installs one venv for every rule (Makefile, environment.yml), so per-rule
environments are the only lint we accept (STYLE.md, convention 9).
"""

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ACCEPTED = {"Specify a conda environment or container for each rule."}


def test_snakemake_lint_clean():
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--lint", "--cores", "1"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    out = proc.stdout + proc.stderr
    assert "Lints for" in out or "Congratulations" in out, out[-3000:]
    titles = set(re.findall(r"^\s+\* (.+?):?$", out, re.MULTILINE))
    titles = {t.rstrip(":") for t in titles}
    assert titles <= {t.rstrip(".") + "." for t in ACCEPTED} | ACCEPTED, titles
