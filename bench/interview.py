"""INTERVIEW: an interview-size study built from the ArgKP 2021 train split, read in place.

The study, written into a work folder (never into the repository):
- 40 transcripts (`--interview-transcripts`), one participant each, of distinct turns: a turn
  is one to three crowd-written arguments of one debate topic and stance, joined; a
  transcript talks about a topic for a block of turns, then moves on. At a smaller size each
  transcript keeps the first turns of the largest size's, so the studies are nested.
- 3 analysts, 15 themes each: ArgKP key points (name) with a description in the analyst's
  words and one matching argument; each analyst's own coding of the transcripts (the
  arguments the ArgKP annotators matched to the key point, offsets into the file), 80 % of
  them, a different 80 % per analyst.
- 3 generators x 3 runs, 15 themes each, no coding, three quoted arguments per theme:
  `close` draws its key points from the analysts' pool, `sibling` half from the same topics'
  other key points, `loose` half from any topic.
- reference_group the analysts, run_groups the generators; MiniLM + TF-IDF (+ mpnet), grounding
  on, metric settings at their defaults.

Everything is seeded (`seed`): the same folder, byte for byte, at each call.
"""

from __future__ import annotations

import csv
import os
import re
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import yaml

ANALYSTS = ["analyst_a", "analyst_b", "analyst_c"]
GENERATORS = {"close": 0.0, "sibling": 0.5, "loose": 0.5}
RUNS = 3
THEMES = 15
POOL = 24  # key points the analysts draw their 15 from
CODED_SHARE = 0.8
OPENERS = {
    "analyst_a": "Participants argue that {kp}.",
    "analyst_b": "Talk of how {kp}, in their own experience.",
    "analyst_c": "The view that {kp}, raised when the topic came up.",
}


def argkp_folder(given: str | None, repo: Path) -> Path:
    """--argkp, else $THEMESIM_ARGKP, else shared/data/argkp_train beside the checkout or
    above a worktree's folder."""
    if given or os.environ.get("THEMESIM_ARGKP"):
        return Path(given or os.environ["THEMESIM_ARGKP"])
    for up in repo.parents:
        cand = up / "shared" / "data" / "argkp_train"
        if cand.is_dir():
            return cand
    raise SystemExit(
        "INTERVIEW: the ArgKP train split was not found (shared/data/argkp_train above the "
        "checkout); give --argkp DIR"
    )


def _rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _clean(text: str) -> str:
    return " ".join(text.split())


def _lower_first(text: str) -> str:
    text = text.rstrip(".").strip()
    return text[:1].lower() + text[1:]


class ArgKP:
    def __init__(self, folder: Path):
        args = _rows(folder / "arguments_train.csv")
        self.kps = _rows(folder / "key_points_train.csv")
        self.text = {a["arg_id"]: _clean(a["argument"]) for a in args}
        self.groups: dict[tuple[str, str], list[str]] = defaultdict(list)
        for a in args:
            self.groups[(a["topic"], a["stance"])].append(a["arg_id"])
        self.matches: dict[str, list[str]] = defaultdict(list)  # key point -> arguments
        for r in _rows(folder / "labels_train.csv"):
            if r["label"] == "1":
                self.matches[r["key_point_id"]].append(r["arg_id"])
        self.kp_text = {k["key_point_id"]: _clean(k["key_point"]) for k in self.kps}
        self.kp_group = {k["key_point_id"]: (k["topic"], k["stance"]) for k in self.kps}


def _turns(data: ArgKP, n_transcripts: int, per: int, rng) -> list[list[list[str]]]:
    """Per transcript, `per` turns, each a list of argument ids; every turn's text distinct
    across the study."""
    groups = sorted(data.groups)
    seen: set[str] = set()
    out = []
    for _ in range(n_transcripts):
        turns: list[list[str]] = []
        while len(turns) < per:
            ids = data.groups[groups[int(rng.integers(len(groups)))]]
            for _ in range(int(rng.integers(8, 30))):  # a block on one topic and stance
                if len(turns) == per:
                    break
                for _ in range(20):
                    k = int(rng.integers(1, 4))
                    pick = [ids[i] for i in rng.choice(len(ids), size=k, replace=False)]
                    text = " ".join(data.text[i] for i in pick)
                    if text not in seen:
                        seen.add(text)
                        turns.append(pick)
                        break
        out.append(turns)
    return out


def _write_csv(path: Path, header: list[str], rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def build_study(
    root: Path,
    argkp: Path,
    turns: int,
    largest: int,
    n_transcripts: int = 40,
    methods: tuple[str, ...] = ("minilm", "tfidf"),
    seed: int = 0,
) -> dict:
    """Write the study of `turns` turns (the first turns of each transcript of the `largest`
    size's study) into root; its config, data/ and nothing else. Returns its sizes."""
    if turns % n_transcripts or largest % n_transcripts or turns > largest:
        raise SystemExit(f"INTERVIEW: turns {turns} and {largest} must split into {n_transcripts}")
    data = ArgKP(argkp)
    rng = np.random.default_rng(seed)
    per = turns // n_transcripts
    every = _turns(data, n_transcripts, largest // n_transcripts, rng)
    # Key points with enough matched arguments to be coded and quoted, in a seeded order.
    usable = sorted(k for k in data.kp_text if len(data.matches[k]) >= 6)
    order = [usable[i] for i in rng.permutation(len(usable))]
    pool, rest = order[:POOL], order[POOL:]

    # Transcripts, and where each argument lands (file offsets of the text written).
    where: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    folder = root / "data" / "transcripts"
    folder.mkdir(parents=True, exist_ok=True)
    for t, ts in enumerate(every):
        name, speaker = f"interview{t + 1:02d}", f"P{t + 1:02d}"
        parts, pos = [], 0
        for turn in ts[:per]:
            head = f"{speaker}: "
            pos += len(head)
            for j, arg in enumerate(turn):
                if j:
                    pos += 1
                where[arg].append((name, pos, pos + len(data.text[arg])))
                pos += len(data.text[arg])
            parts.append(head + " ".join(data.text[a] for a in turn) + "\n\n")
            pos += 2
        text = "".join(parts)
        assert len(text) == pos
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")

    sets, n_coded = [], 0
    for a, analyst in enumerate(ANALYSTS):
        r = np.random.default_rng([seed, 1, a])
        kps = [pool[i] for i in sorted(r.choice(POOL, size=THEMES, replace=False))]
        themes, coded = [], []
        for i, kp in enumerate(kps):
            name = data.kp_text[kp].rstrip(".")
            example = data.text[data.matches[kp][int(r.integers(len(data.matches[kp])))]]
            desc = OPENERS[analyst].format(kp=_lower_first(data.kp_text[kp])) + " " + example
            themes.append([f"{analyst[-1].upper()}{i + 1:02d}", name, desc])
            for arg in data.matches[kp]:
                for doc, start, end in where.get(arg, []):
                    if r.random() < CODED_SHARE:
                        coded.append([doc, name, data.text[arg], start, end, analyst])
        coded.sort(key=lambda row: (row[0], row[3], row[1]))
        n_coded += len(coded)
        _write_csv(
            root / "data" / "themes" / f"{analyst}.csv", ["id", "name", "description"], themes
        )
        _write_csv(
            root / "data" / "coded" / f"{analyst}.csv",
            ["document", "theme", "text", "start", "end", "coder"],
            coded,
        )
        sets.append({"path": f"data/themes/{analyst}.csv", "segments": f"data/coded/{analyst}.csv"})

    groups = {}
    for g, (gen, off) in enumerate(GENERATORS.items()):
        groups[gen] = []
        for run in range(1, RUNS + 1):
            r = np.random.default_rng([seed, 2, g, run])
            n_off = int(round(off * THEMES))
            own = [pool[i] for i in r.choice(POOL, size=THEMES - n_off, replace=False)]
            if gen == "sibling":  # other key points of the pool's topics
                near = [k for k in rest if data.kp_group[k] in {data.kp_group[p] for p in pool}]
                own += [near[i] for i in r.choice(len(near), size=n_off, replace=False)]
            elif n_off:
                own += [rest[i] for i in r.choice(len(rest), size=n_off, replace=False)]
            themes = []
            for i, kp in enumerate(own):
                # A list cell is split at ';': quotes without one.
                cands = [a for a in data.matches[kp] if ";" not in data.text[a]]
                picks = r.choice(len(cands), size=min(3, len(cands)), replace=False)
                quotes = [data.text[cands[j]] for j in picks]
                desc = f"Several participants say {_lower_first(data.kp_text[kp])}."
                themes.append(
                    [f"G{i + 1:02d}", data.kp_text[kp].rstrip("."), desc, "; ".join(quotes)]
                )
            name = f"{gen}_run{run}"
            _write_csv(
                root / "data" / "themes" / f"{name}.csv",
                ["id", "name", "description", "quotes"],
                themes,
            )
            sets.append({"path": f"data/themes/{name}.csv"})
            groups[gen].append(name)

    specs = {
        "minilm": {"kind": "sentence_transformer", "thresholds": [0.56]},
        "mpnet": {"kind": "sentence_transformer", "thresholds": [0.62]},
        "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
    }
    config = {
        "study": {"name": f"interview-{turns}"},
        "reference": ANALYSTS[0],
        "theme_sets": sets,
        "run_groups": groups,
        "reference_group": ANALYSTS,
        "transcripts": ["data/transcripts/*.txt"],
        "grounding": {"active": True},
        # No vector cache: a vector's last bits follow the batch it was encoded in, so with
        # a cache they would follow which job encoded a text first (tables byte-identical
        # between a local and a cluster run need none).
        "embedding_cache": False,
        "methods": {m: specs[m] for m in methods},
    }
    (root / "config").mkdir(parents=True, exist_ok=True)
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return {
        "transcripts": n_transcripts,
        "turns": sum(len(ts[:per]) for ts in every),
        "sets": len(sets),
        "coded": n_coded,
    }


# ---------------------------------------------------------------- per-rule figures from /proc

SCRIPT = re.compile(r"\.snakemake/scripts/tmp[^/\s]*?\.(\w+)\.py")


def rule_of_script(repo: Path) -> dict[str, str]:
    """Script stem -> the rule that runs it (workflow/rules/*.smk)."""
    out = {}
    for smk in sorted((repo / "workflow" / "rules").glob("*.smk")):
        rule = None
        for line in smk.read_text().splitlines():
            m = re.match(r"\s*rule (\w+):", line)
            if m:
                rule = m.group(1)
            m = re.search(r'"\.\./\.\./scripts/(\w+)\.py"', line)
            if m and rule:
                out.setdefault(m.group(1), rule)
    return out


def _stat(pid: int) -> tuple[int, float, float] | None:
    """(parent pid, user + system CPU seconds of the process, the same with its reaped
    children)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    own = int(fields[11]) + int(fields[12])
    return int(fields[1]), own / CLK, (own + int(fields[13]) + int(fields[14])) / CLK


def _hwm_mb(pid: int) -> float:
    """The kernel's peak resident set (VmHWM) of a process: exact, not sampled."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


CLK = os.sysconf("SC_CLK_TCK")


class ProcJobs:
    """Every process under `root_pid`, every `every` seconds: a job is a process that runs
    one of the workflow's scripts (and its own children, e.g. forked workers). Per job: wall
    (first to last sight), CPU (its and its reaped children's user + system at the last
    sight), peak RSS (the largest VmHWM among its processes)."""

    def __init__(self, root_pid: int, scripts: dict[str, str], every: float = 0.5):
        import threading

        self.root, self.scripts, self.every = root_pid, scripts, every
        self.jobs: dict[int, dict] = {}
        self.main = {"cpu": 0.0, "rss": 0.0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self):
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.every)

    def sample(self):
        now = time.monotonic()
        parents, own, cpu = {}, {}, {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                st = _stat(int(entry))
                if st:
                    parents[int(entry)], own[int(entry)], cpu[int(entry)] = st
        children = defaultdict(list)
        for pid, ppid in parents.items():
            children[ppid].append(pid)

        def under(pid):
            todo, seen = [pid], []
            while todo:
                p = todo.pop()
                seen.append(p)
                todo += children.get(p, [])
            return seen

        if self.root not in parents:
            return
        top = children.get(self.root, [])  # under /usr/bin/time: Snakemake itself
        for pid in top:
            self.main["cpu"] = own[pid]
            self.main["rss"] = max(self.main["rss"], _hwm_mb(pid))
        todo = list(top)
        while todo:  # the first process down each branch that runs a script is the job
            pid = todo.pop()
            job = self.jobs.get(pid)
            if job is None:
                m = SCRIPT.search(_cmdline(pid))
                if not m:
                    todo += children.get(pid, [])
                    continue
                name = self.scripts.get(m.group(1), m.group(1))
                job = self.jobs[pid] = {"rule": name, "start": now, "cpu": 0.0, "rss": 0.0}
            job["end"] = now
            tree = under(pid)
            job["cpu"] = max(job["cpu"], cpu[pid] + sum(cpu.get(c, 0.0) for c in tree[1:]))
            job["rss"] = max([job["rss"], *(_hwm_mb(p) for p in tree)])

    def rules(self) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for job in self.jobs.values():
            r = out.setdefault(job["rule"], {"jobs": 0, "wall": 0.0, "cpu": 0.0, "rss": 0.0})
            r["jobs"] += 1
            r["wall"] += job["end"] - job["start"]
            r["cpu"] += job["cpu"]
            r["rss"] = max(r["rss"], job["rss"])
        return out
