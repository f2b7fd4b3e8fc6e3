"""Rule qdpx_project (`snakemake qdpx`): per method, the study's codings as one REFI-QDA
project, results/qdpx/{method}.qdpx, to read in QualCoder, ATLAS.ti, MAXQDA or NVivo
(io/qdpx_export.py).

- the transcripts, as the study scored them;
- each human coder of a set with coded segments as a user (a coded-segments file's `coder`
  column, or a .qdpx's users), their passages coded with the set's themes;
- the method's coder (grounding.coder) applying each theme set as another user,
  `<set> (coder, <method>)`, its labels on the transcript segments as selections over those
  segments;
- every set's themes as codes under a parent code named after the set;
- where the users coding with one set's themes are not unanimous (its human coders and the
  coder), codes under `Disagreements (themesim)`. Different sets' themes are different code
  books and are not compared here.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from themesim.io.coded import coded_span, read_coded_file
from themesim.io.codings import SPAN_COLUMNS, Codings
from themesim.io.qdpx_export import write_qdpx
from themesim.io.refi_qda import study_project
from themesim.io.themes import read_themes_parquet
from themesim.steps.job import Job
from themesim.steps.segment_labels import load_transcripts

log = logging.getLogger("themesim")

# The rule's output (workflow/rules/qdpx.smk reads it here: rule files type no results path).
PROJECT = "results/qdpx/{method}.qdpx"


def _human_spans(
    set_name, coded, level, themes, texts, user=None
) -> list[tuple[str, str, str, int, int]]:
    """(coder, document, theme_id, start, end) of a set's coded segments, located as the
    labelling job locates them (a .qdpx set's: its `user:`'s codings only, when it names one)."""
    if Path(coded).suffix.lower() == ".qdpx":
        proj = study_project(coded, level, user)
        table = proj.coded.assign(coder=[proj.users.get(u, u) for u in proj.coded["coder"]])
    else:
        table = read_coded_file(coded, themes)
    out, cache = [], {}
    for doc, tid, text, start, end, coder, n in table.itertuples(index=False, name=None):
        doc, a, b = coded_span(doc, text, start, end, texts, f"{coded}, row {n}", cache)
        out.append((str(coder).strip() or set_name, doc, str(tid), a, b))
    return out


def study_qdpx(job: Job) -> None:
    """results/qdpx/{method}.qdpx (inputs.jobs.qdpx_project). themes, labels: set -> its
    theme table and the method's labels of it (steps/segment_labels.py); coded: set -> its
    coded-segments file or .qdpx; coder_sets: the sets the method's coder labels (each its
    user, even when it labels nothing); users: .qdpx set -> its `user:` (only that user's
    codings are the set's)."""
    method, out = job.params["method"], job.output["project"]
    _segments, texts, offsets = load_transcripts(job.input["segments"], job.input["transcripts"])
    users = _Users(texts, offsets)
    codes: list[str] = []
    groups: dict[str, list[int]] = {}
    for s, path in job.input["themes"].items():
        for name, who in users.of_set(job, s, path).items():
            codes.append(name)
            groups[name] = who
    spans = pd.DataFrame(users.rows, columns=SPAN_COLUMNS)
    used = set(spans["code"])
    codes = [c for c in codes if c in used]
    c = Codings(tuple(users.coders), codes, spans, texts)
    if not users.coders:
        log.info("%s: no coded segments and no coder labels: the transcripts only", out)
    n = write_qdpx(
        c,
        out,
        name=f"themesim {method}",
        groups=groups,
        origin=f"themesim (snakemake qdpx, {method})",
    )
    log.info(
        "%s: %d users (%s), %d selections, %d passages where users of one set's themes differ",
        out,
        n["coders"],
        ", ".join(users.coders),
        n["selections"],
        n["disagreements"],
    )


class _Users:
    """The project's users (each human coder, the method's coder of each set) and their
    selections (rows of io.codings.SPAN_COLUMNS), gathered set by set."""

    def __init__(self, texts, offsets):
        self.texts, self.coders, self.rows = texts, [], []
        cols = ["transcript", "segment", "char_start", "char_end"]
        self.span = {
            (t, int(s)): (int(a), int(b))
            for t, s, a, b in offsets[cols].itertuples(index=False, name=None)
        }

    def index(self, name: str) -> int:
        if name not in self.coders:
            self.coders.append(name)
        return self.coders.index(name)

    def of_set(self, job: Job, s: str, themes_path) -> dict[str, list[int]]:
        """The set's themes as codes, each with the users who code with them."""
        p, coded = job.params, job.input["coded"]
        table = read_themes_parquet(themes_path)
        names = [" ".join(str(n).split()) for n in table["name"]]
        label = {  # two themes of one name (a .qdpx's "Other" under two parents) stay two
            str(t): f"{s}/{n}" if names.count(n) == 1 else f"{s}/{n} [{t}]"
            for t, n in zip(table["theme_id"], names, strict=True)
        }
        users: list[int] = []
        if s in coded:
            level, user = p["levels"].get(s, "all"), p["users"].get(s)
            for who, doc, tid, a, b in _human_spans(s, coded[s], level, table, self.texts, user):
                k = self.index(who)
                users.append(k)
                self.rows.append((k, doc, label[tid], a, b, str(coded[s]), 0))
        labels = p["labels"][s]
        lab = pd.read_parquet(labels)
        lab = lab[lab["source"] == "assigned"]
        if len(lab) or s in p["coder_sets"]:
            k = self.index(f"{s} (coder, {p['method']})")
            users.append(k)
            cols = ["transcript", "segment", "theme_id"]
            for doc, seg, tid in lab[cols].itertuples(index=False, name=None):
                a, b = self.span[(doc, int(seg))]
                self.rows.append((k, doc, label[str(tid)], a, b, str(labels), int(seg)))
        return {name: sorted(set(users)) for name in label.values()}
