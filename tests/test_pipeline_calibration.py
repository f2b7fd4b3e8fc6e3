"""Calibration of llm_judge and precomputed methods inside the workflow: a fake judge server
on 127.0.0.1 (tests/helpers.py, no model) and the tiny study's precomputed matrices."""

import json
import re
import sqlite3

import pandas as pd
import pytest
import yaml
from helpers import FakeLLM, completion, job_counts, make_study, snakemake, themes_in

H = {
    "work": "Caring while working: Fitting shifts and meetings around looking after a parent",
    "health": "Own health suffers: Carers lose sleep and neglect their own health",
    "money": "Money worries: The costs of care strain the household budget",
    "guilt": "Guilt: Feeling guilty about respite or about losing patience",
}
L = {
    "job": "Employment and caregiving conflict: Balancing a job with caring duties for an "
    "older parent",
    "finance": "Financial strain: Paying for care puts pressure on family finances",
    "garden": "Gardening as escape: Tending plants offers a break from daily routine",
    "work2": "Work and care: Jobs squeezed around caring",
    "costs": "Costs: Care is expensive",
}
# (text_a, text_b, label) and the score of data/judge (make_study) where it has the pair.
RATED = [
    (H["work"], L["job"], 1),  # 0.9
    (H["money"], L["finance"], 1),  # 0.8
    (L["costs"], H["money"], 1),  # 0.9, swapped: llm2's theme first
    (H["guilt"], L["job"], 0),  # 0.5
    (H["health"], L["garden"], 0),  # 0.3
    (H["work"], L["costs"], 0),  # 0.1
    (H["guilt"], L["work2"], 1),  # 0.2
    ("Sleep: nothing at night", L["costs"], 0),  # no theme: not in any matrix
]
TARGETS = [
    "results/metrics/pre/comparisons.csv",
    "results/metrics/llmj/comparisons.csv",
    "results/calibration/llmj.csv",
    "results/metrics/pre/grounding.csv",
]


def words_overlap(n, body, headers):
    """The fake judge: Jaccard overlap of the two texts' words, two decimals."""
    a, b = (set(re.findall(r"\w+", t.lower())) for t in themes_in(body))
    return 200, completion(json.dumps({"score": round(len(a & b) / len(a | b), 2)})), 0


def write_methods(root, url, pre, llmj):
    path = root / "config" / "config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["calibration"] = {"pairs": "data/rated.csv", "bootstrap": {"n": 50, "seed": 0}}
    cfg["methods"] = {
        "pre": {"kind": "precomputed", "dir": "data/judge"} | pre,
        "llmj": {
            "kind": "llm_judge",
            "base_url": url,
            "model": "fake-model",
            "prompt": "judge_v1",
            "score_mode": "json",
            "concurrency": 1,
            "max_retries": 0,
        }
        | llmj,
    }
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    fake = FakeLLM(words_overlap)
    root = make_study(tmp_path_factory.mktemp("calibration"))
    pd.DataFrame(RATED, columns=["text_a", "text_b", "label"]).to_csv(
        root / "data" / "rated.csv", index=False
    )
    write_methods(
        root,
        fake.url,
        {"thresholds": ["calibrated", 0.5]},
        {"scale": "calibrated", "thresholds": [0.5]},
    )
    snakemake(root, "--cores", "2", *TARGETS)
    yield root, fake
    fake.close()


def test_precomputed_calibration_from_its_matrices(study):
    root, _ = study
    cal = pd.read_csv(root / "results/calibration/pre.csv").iloc[0]
    # Matches 0.9, 0.8, 0.9, 0.2; non-matches 0.5, 0.3, 0.1: 10 of 12 ordered pairs right;
    # score >= 0.8 keeps 3 of 4 matches and no non-match: F1 = 6/7 (the best).
    assert (cal["n_pairs"], cal["n_positive"]) == (7, 4)
    assert cal["auc"] == pytest.approx(10 / 12)
    assert (cal["f1_threshold"], cal["f1_max"]) == (0.8, pytest.approx(6 / 7))
    scores = pd.read_csv(root / "results/calibration/pre/scores.csv")
    assert scores["score"].tolist() == [0.9, 0.8, 0.9, 0.5, 0.3, 0.1, 0.2]
    log = (root / "logs/calibration/pre.log").read_text()
    assert "1 of 8 rated pairs have no score and are left out" in log
    # All 7 scored pairs are cells of pre's comparisons, which they calibrate: the summary
    # and the log say so; crossfit.csv calibrates each comparison without its own cells.
    assert (cal["n_pairs_in_comparisons"], cal["comparisons_in_sample"]) == (7, 2)
    assert "7 of 7 rated pairs are cells of 2 of its comparisons" in log
    cross = pd.read_csv(root / "results/calibration/pre/crossfit.csv")
    assert cross[["set_b", "n_rated_cells", "n_pairs_fit"]].values.tolist() == [
        ["llm", 4, 3],
        ["llm2", 3, 4],
    ]
    # without llm's cells 1 non-match is left (too few); without llm2's: 0.9, 0.8 over 0.5, 0.3
    assert pd.isna(cross["auc"].iloc[0])
    assert (cross["auc"].iloc[1], cross["f1_threshold"].iloc[1]) == (1.0, 0.8)
    assert (
        cal["prevalence"] == pytest.approx(4 / 7) and cal["target_prevalence"] == cal["prevalence"]
    )
    comp = pd.read_csv(root / "results/metrics/pre/comparisons.csv")
    first = comp.drop_duplicates("threshold_source")
    assert dict(zip(first["threshold_source"], first["threshold"], strict=True)) == {
        "calibrated (F1-max)": 0.8,
        "config": 0.5,
    }
    # Grounding's text threshold (the first) is the calibrated one, on the raw scores.
    grounding = pd.read_csv(root / "results/metrics/pre/grounding.csv")
    assert grounding["text_threshold"].tolist() == [0.8, 0.8]


def test_judge_calibration_shares_the_judgement_cache(study):
    root, fake = study
    scores = pd.read_csv(root / "results/calibration/llmj/scores.csv")
    assert len(scores) == 8 and scores["score"].between(0, 1).all()
    # Rated pairs are judged (text_a, text_b) as a matrix judges (A theme, B theme): the
    # swapped pair is a new judgement, the 6 others are cells of human vs llm / llm2.
    with sqlite3.connect(root / "results/cache/judge.sqlite") as db:
        rows = db.execute("select status, count(*) from judgements group by status").fetchall()
    assert rows == [("ok", 4 * 3 + 4 * 2 + 2)]
    calls = fake.calls
    # (The target before --forcerun, which would take it as a rule to force.)
    snakemake(root, "--cores", "2", "results/calibration/llmj.csv", "--forcerun", "calibration")
    assert fake.calls == calls
    assert "8 judgements (8 cached, 0 new" in (root / "logs/calibration/llmj.log").read_text()
    # scale: calibrated maps the judge's scores through its isotonic fit.
    fit = pd.read_csv(root / "results/calibration/llmj/isotonic.csv")
    comp = pd.read_csv(root / "results/metrics/llmj/comparisons.csv")
    assert fit["p_match"].min() <= comp.loc[0, "matched_sim_max"] <= fit["p_match"].max()


def test_thresholds_rerun_only_the_metrics(study):
    root, fake = study
    write_methods(
        root,
        fake.url,
        {"thresholds": ["calibrated", 0.6]},
        {"scale": "calibrated", "thresholds": [0.4, "calibrated"]},
    )
    counts = job_counts(snakemake(root, "-n", "--cores", "2", *TARGETS).stdout)
    # grounding reads thresholds.csv, which every metrics run writes anew
    assert counts == {"metrics": 2, "grounding": 1}, counts
    # A new first threshold reruns grounding, which decides its text side at it.
    write_methods(
        root, fake.url, {"thresholds": [0.7, 0.6]}, {"scale": "calibrated", "thresholds": [0.5]}
    )
    counts = job_counts(snakemake(root, "-n", "--cores", "2", *TARGETS).stdout)
    assert counts.get("grounding") == 1 and counts["metrics"] == 1, counts
    # A precomputed method that does not use `calibrated` is not calibrated; the judge is.
    write_methods(root, fake.url, {"thresholds": [0.5]}, {"thresholds": [0.5]})
    out = snakemake(root, "-n", "--cores", "2", "--forceall").stdout
    counts = job_counts(out)
    assert counts["calibration"] == 1 and "results/calibration/llmj.csv" in out
    assert "results/calibration/pre.csv" not in out


# A stand-in for llama.cpp's llama-server ($THEMESIM_LLAMA_SERVER): it logs each start and
# each request, and answers a prefilled json request with words_overlap's percentage.
FAKE_SERVER = r"""#!{python}
import json, re, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

if "--version" in sys.argv:
    print("version: 0.0.0-fake (build 0, commit fake)")
    sys.exit(0)
port = int(sys.argv[sys.argv.index("--port") + 1])


def note(what):
    with open({log!r}, "a") as f:
        f.write(what + "\n")


note("start")


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send({{"status": "ok"}})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        m = re.search(r"Theme A:\n(.*?)\n\nTheme B:\n(.*?)(?:\n\n|\s*\Z)", user, re.S)
        a, b = (set(re.findall(r"\w+", t.lower())) for t in m.groups())
        note("call")
        score = str(round(100 * len(a & b) / len(a | b)))
        choice = {{"message": {{"role": "assistant", "content": score}}, "finish_reason": "stop"}}
        self.send({{"choices": [choice], "usage": {{}}}})

    def send(self, payload):
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


def server_log(path) -> dict[str, int]:
    lines = path.read_text().split() if path.exists() else []
    return {k: lines.count(k) for k in ("start", "call")}


@pytest.fixture(scope="module")
def one_server(tmp_path_factory):
    """The tiny study with a judge on the local server (a fake llama-server) and rated pairs."""
    import sys

    from helpers import snakemake_env

    root = make_study(tmp_path_factory.mktemp("judge_one_server"))
    log = root / "server.log"
    binary = root / "llama-server"
    binary.write_text(FAKE_SERVER.format(python=sys.executable, log=str(log)))
    binary.chmod(0o755)
    pd.DataFrame(RATED, columns=["text_a", "text_b", "label"]).to_csv(
        root / "data" / "rated.csv", index=False
    )
    path = root / "config" / "config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["calibration"] = {"pairs": "data/rated.csv", "bootstrap": {"n": 50, "seed": 0}}
    cfg["methods"] = {"llmj": {"kind": "llm_judge", "score_mode": "json", "thresholds": [0.5]}}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    env = snakemake_env(THEMESIM_LLAMA_SERVER=str(binary))
    targets = ["results/metrics/llmj/comparisons.csv", "results/calibration/llmj.csv"]
    snakemake(root, "--cores", "2", *targets, env=env)
    return root, log, env, targets, cfg


def test_the_judge_starts_one_server_for_its_matrices_and_rated_pairs(one_server):
    """The similarity job judges the rated pairs too; the calibration job after it finds
    them all cached: no call, no server."""
    root, log, *_ = one_server
    # 4 x 3 + 4 x 2 matrix cells; of the 8 rated pairs 6 are cells, 2 are new.
    assert server_log(log) == {"start": 1, "call": 4 * 3 + 4 * 2 + 2}
    sim = (root / "logs/similarity/llmj.log").read_text()
    # one sorted stream asks the 20 cells and the 2 rated pairs that are not cells
    assert "22 judgements (0 cached, 22 new, 0 failed, 0 skipped), 22 calls" in sim
    assert "8 rated pairs (for calibration): 8 judgements (8 cached, 0 new" in sim
    cal = (root / "logs/calibration/llmj.log").read_text()
    assert "(8 cached, 0 new" in cal and "0 calls" in cal and "starting a local" not in cal
    with sqlite3.connect(root / "results/cache/judge.sqlite") as db:
        raw = db.execute("select raw_response from judgements").fetchall()
    assert all(re.fullmatch(r'\{"score": \d{1,3}\}', r) for (r,) in raw), raw[:3]
    # The fake's integer percentage of shared words, / 100, for every rated pair.
    scores = pd.read_csv(root / "results/calibration/llmj/scores.csv")
    want = []
    for text_a, text_b, _ in RATED:
        a, b = (set(re.findall(r"\w+", t.lower())) for t in (text_a, text_b))
        want.append(round(100 * len(a & b) / len(a | b)) / 100)
    assert scores["score"].tolist() == want


def test_edited_rated_pairs_rerun_only_the_calibration_job(one_server):
    """ancient: a new rated pair reruns the calibration job, which starts the server for
    it; the similarity job and its consumers stay as they are. Thresholds rerun metrics."""
    root, log, env, targets, cfg = one_server
    before = server_log(log)
    rated = pd.DataFrame(RATED, columns=["text_a", "text_b", "label"])
    new = pd.DataFrame([("Rest: short breaks help", L["garden"], 0)], columns=rated.columns)
    pd.concat([rated, new]).to_csv(root / "data" / "rated.csv", index=False)
    counts = job_counts(snakemake(root, "-n", "--cores", "2", *targets, env=env).stdout)
    assert "similarity_judge" not in counts and counts["calibration"] == 1, counts
    snakemake(root, "--cores", "2", "results/calibration/llmj.csv", env=env)
    assert server_log(log) == {"start": before["start"] + 1, "call": before["call"] + 1}
    cfg["methods"]["llmj"]["thresholds"] = [0.3, 0.7]
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    counts = job_counts(snakemake(root, "-n", "--cores", "2", *targets, env=env).stdout)
    assert counts == {"metrics": 1}, counts
