"""What several test files share: the tiny study, running Snakemake on a study folder, the
`snakemake -n` job stats, a fake OpenAI-compatible server (no model) and small REFI-QDA projects.

Test files import from here (conftest.py puts this folder on the path), never from each other.
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------- the tiny study

HUMAN = """id,name,description,keywords
H1,Caring while working,Fitting shifts and meetings around looking after a parent,work;shifts
H2,Own health suffers,Carers lose sleep and neglect their own health,sleep;health
H3,Money worries,The costs of care strain the household budget,money;costs
H4,Guilt,Feeling guilty about respite or about losing patience,guilt
"""
LLM = """themes:
  - id: L1
    name: Employment and caregiving conflict
    description: Balancing a job with caring duties for an older parent
  - id: L2
    name: Financial strain
    description: Paying for care puts pressure on family finances
  - id: L3
    name: Gardening as escape
    description: Tending plants offers a break from daily routine
"""
LLM2 = """{"themes": [
  {"name": "Work and care", "description": "Jobs squeezed around caring", "keywords": ["work"]},
  {"name": "Costs", "description": "Care is expensive", "keywords": ["money", "costs"]}
]}
"""
TRANSCRIPT = """Interviewer: How do you manage work?
Sam: I changed my shifts so I can be with Mum in the mornings.
It is hard.
Interviewer: And money?
Sam: The care bills are a worry.
"""


def write_data(root: Path) -> Path:
    """The three theme sets (human.csv, llm.yaml, llm2.json) and one transcript under data/."""
    (root / "data").mkdir(parents=True)
    (root / "data" / "human.csv").write_text(HUMAN)
    (root / "data" / "llm.yaml").write_text(LLM)
    (root / "data" / "llm2.json").write_text(LLM2)
    (root / "data" / "sam.txt").write_text(TRANSCRIPT)
    return root


def make_study(root: Path, thresholds=(0.5,)) -> Path:
    """The tiny study with every method kind that needs no server: MiniLM, TF-IDF, ABTT and
    precomputed matrices (data/judge)."""
    write_data(root)
    pre = root / "data" / "judge"
    pre.mkdir()
    (pre / "human__vs__llm.csv").write_text(
        ",Employment and caregiving conflict,Financial strain,Gardening as escape\n"
        "Caring while working,0.9,0.1,0.0\n"
        "Own health suffers,0.2,0.1,0.3\n"
        "Money worries,0.1,0.8,0.0\n"
        "Guilt,0.5,0.0,0.1\n"
    )
    (pre / "human__vs__llm2.csv").write_text(
        ",Work and care,Costs\n"
        "Caring while working,0.8,0.1\n"
        "Own health suffers,0.1,0.1\n"
        "Money worries,0.1,0.9\n"
        "Guilt,0.2,0.0\n"
    )
    write_config(root, list(thresholds))
    return root


def write_config(root: Path, minilm_thresholds, **extra):
    """config/config.yaml of the tiny study; `extra` replaces top-level keys."""
    cfg = {
        "study": {"name": "tiny", "description": "pipeline test"},
        "reference": "human",
        "theme_sets": [
            {"path": "data/human.csv"},
            {"path": "data/llm.yaml", "name": "llm"},
            {"path": "data/llm2.json"},
        ],
        "run_groups": {"llms": ["llm", "llm2"]},
        "transcripts": ["data/*.txt"],
        "sweep": {"start": 0.0, "stop": 1.0, "step": 0.05},
        "metrics": {"bootstrap": {"n": 50, "seed": 1}, "null_model": {"pool": 20, "seed": 2}},
        "methods": {
            "minilm": {"kind": "sentence_transformer", "thresholds": minilm_thresholds},
            "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
            "minilm+abtt": {"kind": "abtt", "base": "minilm", "d": 1, "thresholds": [0.3]},
            "judge": {"kind": "precomputed", "dir": "data/judge", "thresholds": [0.5]},
        },
    } | extra
    if "theme_sets" in extra and "run_groups" not in extra:
        del cfg["run_groups"]  # the tiny study's group names its own sets
    (root / "config").mkdir(exist_ok=True)
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))


# ---------------------------------------------------------------- running the workflow


def snakemake_cmd(root: Path, snakefile: Path | None = None) -> list[str]:
    """Snakemake on the study folder `root`, with this repository's Snakefile by default."""
    snakefile = snakefile or REPO / "Snakefile"
    return [sys.executable, "-m", "snakemake", "-s", str(snakefile), "-d", str(root)]


def snakemake_env(**extra) -> dict[str, str]:
    return dict(os.environ, HF_HUB_OFFLINE="1", **extra)


def snakemake(
    root: Path, *args, check=True, snakefile=None, env=None
) -> subprocess.CompletedProcess:
    """Run Snakemake to the end; with `check`, a failed run fails the test with its output."""
    proc = subprocess.run(
        snakemake_cmd(root, snakefile) + list(args),
        capture_output=True,
        text=True,
        env=env or snakemake_env(),
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


def job_counts(dry_run_output: str) -> dict[str, int]:
    """Job stats table of `snakemake -n`: rule name -> job count."""
    counts = {}
    block = dry_run_output.split("Job stats:", 1)[-1]
    for line in block.splitlines():
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if m and m.group(1) != "total":
            counts[m.group(1)] = int(m.group(2))
    return counts


# ---------------------------------------------------------------- a fake LLM server


def completion(content: str, logprobs=None) -> dict:
    """A chat-completions answer whose message is `content`."""
    choice = {"index": 0, "message": {"role": "assistant", "content": content}}
    if logprobs is not None:
        choice["logprobs"] = logprobs
    return {
        "choices": [choice],
        "usage": {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107},
    }


def trickle(data: bytes, every_s: float, *, in_headers: bool = False, declared: bool = True):
    """A response writer that sends `data` (a JSON body) one byte every `every_s` seconds,
    after complete headers, or with the headers themselves trickled (in_headers); without
    `declared`, no Content-Length (the body ends when the connection closes)."""

    def write(handler):
        length = f"Content-Length: {len(data)}\r\n" if declared else "Connection: close\r\n"
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + (length + "\r\n").encode()
        if every_s == 0:
            handler.wfile.write(head + data)
            return
        slow = head + data if in_headers else data
        if not in_headers:
            handler.wfile.write(head)
            handler.wfile.flush()
        for i in range(len(slow)):
            handler.wfile.write(slow[i : i + 1])
            handler.wfile.flush()
            time.sleep(every_s)

    return write


def themes_in(body: dict) -> tuple[str, str]:
    """The two theme texts of a judge request (its user message: a prefilled answer follows)."""
    text = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    m = re.search(r"Theme A:\n(.*?)\n\nTheme B:\n(.*?)(?:\n\n|\s*\Z)", text, re.S)
    return m.group(1), m.group(2)


def fake_themes(n, body):
    """Distinct themes depending on the stage, the seed and the request."""
    user = body["messages"][-1]["content"]
    stage = "merge" if "Consolidate" in user else "chunk"
    k = int(re.search(r"at most (\d+)", user).group(1))
    return {
        "themes": [
            {
                "name": f"{stage} {body['seed']} {n} {i}",
                "description": f"What participants say ({i}).",
                "keywords": ["care", stage],
            }
            for i in range(min(k, 3))
        ]
    }


def generated_themes(n, body, headers):
    """A generation server's good answer: fake_themes as JSON."""
    return 200, completion(json.dumps(fake_themes(n, body))), 0


class FakeLLM:
    """A chat-completions endpoint on 127.0.0.1 whose answers `behave(n, body, headers)` picks.

    behave returns (status, payload dict or raw str, delay in seconds); n counts requests from 1.
    A payload that is a function writes the whole response itself: payload(handler) (a
    hostile server: see `trickle`).
    """

    def __init__(self, behave):
        self.behave = behave
        self.retry_after: str | None = None  # the Retry-After header of a 429 answer
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.bodies.append(body)
                    fake.headers.append(dict(self.headers))
                    n = len(fake.bodies)
                status, payload, delay = fake.behave(n, body, dict(self.headers))
                time.sleep(delay)
                if callable(payload):
                    try:
                        payload(self)
                    except OSError:
                        pass  # the client cut the connection
                    return
                data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if status == 429 and fake.retry_after is not None:
                        self.send_header("Retry-After", fake.retry_after)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timeout test)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def calls(self) -> int:
        return len(self.bodies)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# ---------------------------------------------------------------- REFI-QDA projects (1.5 spec)

TEXT_A = "Interviewer: How is work?\nAmira: Badly. I cut my hours.\n"
TEXT_B = "Dennis: I never sleep through.\n"


def project_xml(b_source: str, extra: str = "") -> str:
    return f"""<?xml version="1.0" encoding="utf-8"?>
<Project xmlns="urn:QDA-XML:project:1.0" name="demo" origin="test">
  <CodeBook><Codes>
    <Code guid="c-work" name="Work" isCodable="true">
      <Description>Paid work and caring</Description>
      <Code guid="c-hours" name="Cutting hours" isCodable="true"/>
    </Code>
    <Code guid="c-health" name="Own health" isCodable="true"/>
  </Codes></CodeBook>
  <Sources>
    <TextSource guid="s1" name="amira.txt">
      <PlainTextContent>{TEXT_A}</PlainTextContent>
      <PlainTextSelection guid="p1" startPosition="40" endPosition="54" creatingUser="u1">
        <Coding guid="k1" creatingUser="u1"><CodeRef targetGUID="c-hours"/></Coding>
      </PlainTextSelection>
      <PlainTextSelection guid="p2" startPosition="33" endPosition="39">
        <Coding guid="k2"><CodeRef targetGUID="c-work"/></Coding>
        <Coding guid="k3"><CodeRef targetGUID="c-health"/></Coding>
      </PlainTextSelection>
    </TextSource>
    {b_source}
  </Sources>{extra}
</Project>"""


B_INTERNAL = """<TextSource guid="s2" name="dennis" plainTextPath="internal://s2.txt">
      <PlainTextSelection guid="p3" startPosition="8" endPosition="29">
        <Coding guid="k4"><CodeRef targetGUID="c-health"/></Coding>
      </PlainTextSelection>
    </TextSource>"""


def make_qdpx(tmp_path, xml, entries=None, name="proj.qdpx"):
    p = tmp_path / name
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("project.qde", xml)
        for k, v in (entries or {"sources/s2.txt": TEXT_B}).items():
            z.writestr(k, v)
    return p


def comparison_row(method, set_a, set_b, threshold, **metrics):
    """One comparisons.csv row of a report test: every column 0 but those given."""
    from themesim.report.tables import COMPARISON_COLUMNS

    row = dict.fromkeys(COMPARISON_COLUMNS, 0.0)
    row.update(method=method, set_a=set_a, set_b=set_b, threshold=threshold, op="ge", n_a=4, n_b=3)
    row.update(metrics)
    return row


def thresholds_of(values, op="ge"):
    """A method's thresholds as read from its thresholds.csv (metrics.thresholds.Thresholds):
    configured, on the cosine scale, not clamped."""
    from themesim.metrics.thresholds import FROM_CONFIG, Thresholds

    return Thresholds(
        values=list(values), sources=[FROM_CONFIG] * len(values), scale="cosine", clamp=False, op=op
    )


def write_thresholds(path, method, values, *, op="ge", scale=None, clamp=None, sources=None):
    """A method's thresholds.csv as its metrics job writes it (metrics.thresholds); scale
    None: cosine, not clamped."""
    from themesim.io.files import write_csv
    from themesim.metrics.thresholds import FROM_CONFIG, threshold_table

    sources = sources or [FROM_CONFIG] * len(values)
    table = threshold_table(method, values, sources, op, scale or "cosine", bool(clamp))
    write_csv(table, path)
    return path


def write_method(tmp_path, method, rows, *, with_heatmap=True, with_sweep=True):
    """A method's metric tables (and a heatmap, a sweep PNG) as the report reads them."""
    import numpy as np
    import pandas as pd

    from themesim.report.plots.heatmap import Cutoff, ThemeAxis, heatmap
    from themesim.report.tables import COMPARISON_COLUMNS, THEME_COLUMNS

    d = tmp_path / "out" / method
    d.mkdir(parents=True)
    comp = d / "comparisons.csv"
    columns = list(dict.fromkeys(COMPARISON_COLUMNS + [k for r in rows for k in r]))
    pd.DataFrame(rows, columns=columns).to_csv(comp, index=False)
    themes = d / "themes.csv"
    guilt, duty = ("H01", "Guilt and obligation"), ("L02", "Duty | care")
    theme_rows = [
        # A "NA" theme name must stay a name, not become missing.
        [method, "human", "llm", "a", *guilt, *duty, 0.81, 0.40, *duty, 0.81],
        [method, "human", "llm", "a", "H02", "NA", "L01", "Money worries", 0.33, 0.20, "", "", ""],
        [method, "human", "llm", "b", *duty, *guilt, 0.81, 0.55, *guilt, 0.81],
    ]
    pd.DataFrame(theme_rows, columns=THEME_COLUMNS).to_csv(themes, index=False)
    sweep = d / "sweep.csv"
    pd.DataFrame(rows, columns=COMPARISON_COLUMNS).to_csv(sweep, index=False)
    heatmaps = {}
    if with_heatmap:
        S = np.array([[0.81, 0.2, 0.1], [0.3, 0.33, 0.2], [0.1, 0.1, 0.6], [0.0, 0.2, 0.1]])
        heatmaps["human__vs__llm"] = heatmap(
            S,
            ThemeAxis(["a1", "a2", "a3", "a4"]),
            ThemeAxis(["b1", "b2", "b3"]),
            cutoff=Cutoff(0.5, "ge"),
            title="t",
            out_png=d / "heat.png",
        )
    sweep_png = None
    if with_sweep:
        sweep_png = d / "sweep.png"
        sweep_png.write_bytes(
            b"\x89PNG\r\n\x1a\n" + method.encode()
        )  # content irrelevant, only embedded
    thresholds = d / "thresholds.csv"
    values = sorted({r["threshold"] for r in rows})
    write_thresholds(thresholds, method, values)
    return {
        "description": f"{method} cosine similarity",
        "comparisons_csv": str(comp),
        "thresholds_csv": str(thresholds),
        "themes_csv": str(themes),
        "sweep_csv": str(sweep),
        "heatmaps": heatmaps,
        "sweep_png": sweep_png,
    }


def run_session(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    """cmd in a session of its own, its output in files, every process of the session killed
    afterwards. A browser leaves helpers (crash handler, zygote) that can hold a pipe open
    after it exits, and subprocess.run(capture_output=True) would wait on them for ever."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True
        )
        try:
            code = proc.wait(timeout=timeout)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        out.seek(0)
        err.seek(0)
        text = [f.read().decode("utf-8", errors="replace") for f in (out, err)]
    return subprocess.CompletedProcess(cmd, code, *text)


# `themesim agree` from the command line (tests of agree and of its .qdpx export)
AGREE_TEXT = "abcdefghijklmnopqrst"
QDPX_TWO_CODERS = """<?xml version="1.0" encoding="utf-8"?>
<Project xmlns="urn:QDA-XML:project:1.0" name="two" origin="test">
  <Users><User guid="u-a" name="Anna"/><User guid="u-b" name="Ben"/></Users>
  <CodeBook><Codes>
    <Code guid="c-x" name="X" isCodable="true"/>
    <Code guid="c-y" name="Y" isCodable="true"/>
  </Codes></CodeBook>
  <Sources>
    <TextSource guid="s1" name="t1.txt">
      <PlainTextContent>{text}</PlainTextContent>
      <PlainTextSelection guid="p1" startPosition="0" endPosition="10" creatingUser="u-a">
        <Coding guid="k1" creatingUser="u-a"><CodeRef targetGUID="c-x"/></Coding>
      </PlainTextSelection>
      <PlainTextSelection guid="p2" startPosition="12" endPosition="16" creatingUser="u-a">
        <Coding guid="k2" creatingUser="u-a"><CodeRef targetGUID="c-y"/></Coding>
      </PlainTextSelection>
      <PlainTextSelection guid="p3" startPosition="5" endPosition="15" creatingUser="u-b">
        <Coding guid="k3" creatingUser="u-b"><CodeRef targetGUID="c-x"/></Coding>
      </PlainTextSelection>
      <PlainTextSelection guid="p4" startPosition="12" endPosition="16" creatingUser="u-b">
        <Coding guid="k4" creatingUser="u-b"><CodeRef targetGUID="c-y"/></Coding>
      </PlainTextSelection>
    </TextSource>
    <TextSource guid="s2" name="t2.txt">
      <PlainTextContent>0123456789</PlainTextContent>
      <PlainTextSelection guid="p5" startPosition="0" endPosition="5" creatingUser="u-a">
        <Coding guid="k5" creatingUser="u-a"><CodeRef targetGUID="c-x"/></Coding>
      </PlainTextSelection>
      <PlainTextSelection guid="p6" startPosition="0" endPosition="5" creatingUser="u-b">
        <Coding guid="k6" creatingUser="u-b"><CodeRef targetGUID="c-x"/></Coding>
      </PlainTextSelection>
    </TextSource>
  </Sources>
</Project>"""


def themesim_cli(*args, cwd=None):
    """`themesim ARGS` as a subprocess (the installed CLI's module), text output."""
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    return subprocess.run(
        [sys.executable, "-m", "themesim.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )


def one_line_error(proc, pattern=None):
    assert proc.returncode == 2, proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    if pattern:
        assert pattern in lines[0], lines[0]
    return lines[0]


def write_coding(tmp_path, name, rows, columns=("document", "code", "text", "start", "end")):
    p = tmp_path / name
    import pandas as pd

    pd.DataFrame(rows, columns=list(columns)).to_csv(p, index=False)
    return p


def qdpx_study(root):
    """A .qdpx set (Amira leads two lines, so the transcript reader takes her name for a
    speaker), an LLM set, no `transcripts:`, one TF-IDF method; returns Amira's text."""
    import yaml

    (root / "data").mkdir()
    text_a = TEXT_A + "Interviewer: And sleep?\nAmira: Never enough.\n"
    xml = project_xml(B_INTERNAL).replace(TEXT_A, text_a)
    make_qdpx(root / "data", xml, name="coded.qdpx")
    (root / "data" / "llm.yaml").write_text(LLM)
    cfg = {
        "reference": "human",
        "theme_sets": [
            {"path": "data/coded.qdpx", "name": "human", "level": "all"},
            {"path": "data/llm.yaml", "name": "llm"},
        ],
        "metrics": {"bootstrap": {"n": 20, "seed": 1}, "null_model": {"k": 0, "seed": 2}},
        "methods": {"tfidf": {"kind": "tfidf", "thresholds": [0.2]}},
        "grounding": {"bootstrap": 20},
    }
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return text_a


def write_theme_set(path, set_name, ids, names=None):
    """A themes parquet of one set: theme ids, their names (default the ids) and texts (the
    ids), nothing else filled."""
    import pandas as pd

    from themesim.io.themes import write_themes_parquet

    n = len(ids)
    frame = pd.DataFrame(
        {
            "set": set_name,
            "theme_id": list(ids),
            "name": list(names) if names is not None else list(ids),
            "description": "",
            "keywords": [[]] * n,
            "codes": [[]] * n,
            "quotes": [[]] * n,
            "text": list(ids),
            "source_row": range(n),
        }
    )
    write_themes_parquet(frame, path)
    return path


def write_study(args: dict) -> None:
    """write_report from a test's dict of its sources and output paths (a study fixture)."""
    from themesim.report.context import ReportSources
    from themesim.report.summary import write_report

    names = ("study", "methods", "inputs", "transcripts", "provenance", "config")
    sources = ReportSources(**{k: args[k] for k in names})
    write_report(
        sources, out_html=args["out_html"], out_md=args["out_md"], out_pages=args.get("out_pages")
    )
