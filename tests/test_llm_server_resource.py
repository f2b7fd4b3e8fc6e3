"""One local LLM server at a time: every job that may start one holds resource llm_server.

A dry run only (no server, no model): the resources Snakemake resolves per job.
"""

import re

from helpers import make_study, snakemake, write_config

RATED = (
    "text_a,text_b,label\n"
    "Caring while working,Employment and caregiving conflict,1\n"
    "Money worries,Financial strain,1\n"
    "Guilt,Gardening as escape,0\n"
    "Own health suffers,Costs,0\n"
)


def job_resources(dry_run: str) -> list[tuple[str, str, dict]]:
    """(rule, method wildcard, resources) of each job block that `snakemake -n` prints."""
    out = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", dry_run):
        m = re.match(r"(?:local)?rule (\w+):", block)
        if not m:
            continue
        method = re.search(r"^\s+wildcards: .*?method=([^,\s]+)", block, re.MULTILINE)
        found = re.search(r"^\s+resources: (.*)$", block, re.MULTILINE)
        res = dict(kv.split("=", 1) for kv in found.group(1).split(", ")) if found else {}
        out.append((m.group(1), method.group(1) if method else "", res))
    return out


def test_jobs_that_may_start_a_local_server_hold_llm_server(tmp_path):
    root = make_study(tmp_path / "study")
    (root / "data" / "rated.csv").write_text(RATED)
    write_config(
        root,
        [0.5],
        methods={
            "minilm": {"kind": "sentence_transformer", "thresholds": [0.5]},
            "judge": {"kind": "llm_judge", "thresholds": [0.5]},
            # An endpoint elsewhere: no local server, no llm_server.
            "remote": {
                "kind": "llm_judge",
                "base_url": "http://127.0.0.1:9/v1",
                "model": "m",
                "thresholds": [0.5],
            },
        },
        calibration={"pairs": "data/rated.csv"},
        ceiling={"active": True, "k": 2},
    )
    jobs = job_resources(snakemake(root, "--dry-run", "--cores", "2").stdout)
    held = {(rule, method): int(res.get("llm_server", 0)) for rule, method, res in jobs}
    # The judge's two jobs that start the packaged model would otherwise run side by side.
    assert held[("similarity_judge", "judge")] == 1
    assert held[("calibration", "judge")] == 1
    assert held[("paraphrase_reference", "")] == 1
    assert held[("similarity_judge", "remote")] == 0
    assert held[("calibration", "remote")] == 0
    assert held[("calibration", "minilm")] == 0
    assert held[("embed", "minilm")] == 0
    assert sum(held.values()) == 3, held
