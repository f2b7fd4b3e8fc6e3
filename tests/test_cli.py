"""The `themesim` command, run as a user runs it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from seed_examples import SUMMARY, THRESHOLD

from themesim.metrics.sets.coverage import METRIC_COLUMNS

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo" / "themes"


def themesim(*args, check=True):
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, "-m", "themesim.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def write_matrix(path: Path, S: np.ndarray) -> Path:
    lines = [",".join([""] + [f"B{j + 1}" for j in range(S.shape[1])])]
    lines += [",".join([f"A{i + 1}"] + [repr(float(v)) for v in row]) for i, row in enumerate(S)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("name", sorted(SUMMARY))
def test_score_reproduces_seed_summary(tmp_path, name):
    S, paper_j, cov_f1, hung_f1, true_j = SUMMARY[name]
    out = themesim("score", write_matrix(tmp_path / "m.csv", S), "--threshold", THRESHOLD).stdout
    (row,) = json.loads(out)
    assert list(row) == ["threshold", *METRIC_COLUMNS]
    assert row["raza_jaccard"] == pytest.approx(paper_j, abs=0.005)
    assert row["f1"] == pytest.approx(cov_f1, abs=0.005)
    assert row["hungarian_f1"] == pytest.approx(hung_f1, abs=0.005)
    assert row["true_jaccard"] == pytest.approx(true_j, abs=0.005)


def test_score_example4_formats(tmp_path):
    S = SUMMARY["EX4"][0]
    m = write_matrix(tmp_path / "m.csv", S)
    rows = json.loads(themesim("score", m, "--threshold", 0.7, "--threshold", 0.9).stdout)
    assert [r["threshold"] for r in rows] == [0.7, 0.9]
    assert rows[0]["bidir_max_sim_a"] == pytest.approx(0.8167, abs=5e-5)
    assert rows[1]["matched_sim_median"] is None  # nothing matched: null, never 0
    csv_out = themesim("score", m, "--threshold", 0.7, "--format", "csv").stdout.splitlines()
    assert csv_out[0].split(",")[:3] == ["threshold", "n_a", "n_b"]
    text = themesim("score", m, "--threshold", 0.7, "--format", "text").stdout
    assert text.startswith("Theme Alignment: Hungarian F1 = 1.00, Coverage F1 = 1.00")
    assert "Paper's Jaccard: 0.56 (for comparison)" in text


def test_score_gt_operator(tmp_path):
    m = write_matrix(tmp_path / "m.csv", np.array([[0.7, 0.1], [0.1, 0.7]]))
    ge = json.loads(themesim("score", m, "--threshold", 0.7).stdout)[0]
    gt = json.loads(themesim("score", m, "--threshold", 0.7, "--op", "gt").stdout)[0]
    assert ge["hungarian_n_matched"] == 2 and gt["hungarian_n_matched"] == 0


def test_score_bad_matrix_is_a_clear_error(tmp_path):
    m = tmp_path / "m.csv"
    m.write_text(",B1,B2\nA1,0.5,nan\n")
    proc = themesim("score", m, "--threshold", 0.5, check=False)
    assert proc.returncode == 2
    assert "row 2 ('A1'), column 'B2'" in proc.stderr and "Traceback" not in proc.stderr


def test_compare_demo_with_minilm():
    proc = themesim("compare", DEMO / "human.csv", DEMO / "llm_paraphrase.yaml")
    assert "method minilm" in proc.stdout
    assert "Theme Alignment: Hungarian F1 = " in proc.stdout
    assert "(similarity ≥ 0.56)" in proc.stdout


def test_compare_tfidf_json(tmp_path):
    a = tmp_path / "a.csv"
    a.write_text("name,description\nMoney,care costs money\nSleep,no sleep at night\n")
    b = tmp_path / "b.csv"
    b.write_text("name,description\nCosts,care costs a lot of money\n")
    rows = json.loads(
        themesim(
            "compare", a, b, "--method", "tfidf", "--threshold", 0.3, "--format", "json"
        ).stdout.split("\n", 1)[1]
    )
    assert rows[0]["n_a"] == 2 and rows[0]["n_b"] == 1
    assert rows[0]["hungarian_n_matched"] == 1 and rows[0]["hit_rate"] == 0.5
