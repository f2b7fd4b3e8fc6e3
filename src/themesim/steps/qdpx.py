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

log = logging.getLogger("themesim")

# The rule's output (workflow/rules/qdpx.smk reads it here: rule files type no results path).
PROJECT = "results/qdpx/{method}.qdpx"


def _human_spans(
    set_name, coded, level, themes, texts, user=None
) -> list[tuple[str, str, str, int, int]]:
    """(coder, document, theme_id, start, end) of a set's coded segments, located as the
    labelling job locates them (a .qdpx set's: its `user:`'s codings only, when it names one)."""
    from themesim.io.coded import coded_span, read_coded_file

    if Path(coded).suffix.lower() == ".qdpx":
        from themesim.io.refi_qda import study_project

        proj = study_project(coded, level, user)
        table = proj.coded.assign(coder=[proj.users.get(u, u) for u in proj.coded["coder"]])
    else:
        table = read_coded_file(coded, themes)
    out, cache = [], {}
    for doc, tid, text, start, end, coder, n in table.itertuples(index=False, name=None):
        doc, a, b = coded_span(doc, text, start, end, texts, f"{coded}, row {n}", cache)
        out.append((str(coder).strip() or set_name, doc, str(tid), a, b))
    return out


def study_qdpx(
    *,
    method: str,
    sets,
    themes: dict,
    labels: dict,
    coded: dict,
    levels: dict,
    segments_path,
    transcripts,
    out,
    coder_sets=(),
    users: dict | None = None,
) -> None:
    """results/qdpx/{method}.qdpx. themes, labels: set -> its theme table and the method's
    labels of it (steps/segment_labels.py); coded: set -> its coded-segments file or .qdpx;
    coder_sets: the sets the method's coder labels (each its user, even when it labels
    nothing); users: .qdpx set -> its `user:` (only that user's codings are the set's)."""
    import pandas as pd

    from themesim.io.codings import SPAN_COLUMNS, Codings
    from themesim.io.qdpx_export import write_qdpx
    from themesim.io.themes import read_themes_parquet
    from themesim.steps.segment_labels import load_transcripts

    _segments, texts, offsets = load_transcripts(segments_path, transcripts)
    set_users = dict(users or {})  # `users` below is each set's list of coder indices
    span = {
        (t, int(s)): (int(a), int(b))
        for t, s, a, b in offsets[["transcript", "segment", "char_start", "char_end"]].itertuples(
            index=False, name=None
        )
    }
    coders: list[str] = []
    codes: list[str] = []
    rows = []
    groups: dict[str, list[int]] = {}

    def coder_index(name: str) -> int:
        if name not in coders:
            coders.append(name)
        return coders.index(name)

    for s in sets:
        table = read_themes_parquet(themes[s])
        names = [" ".join(str(n).split()) for n in table["name"]]
        label = {  # two themes of one name (a .qdpx's "Other" under two parents) stay two
            str(t): f"{s}/{n}" if names.count(n) == 1 else f"{s}/{n} [{t}]"
            for t, n in zip(table["theme_id"], names, strict=True)
        }
        users: list[int] = []
        if s in coded:
            for who, doc, tid, a, b in _human_spans(
                s, coded[s], levels.get(s, "all"), table, texts, set_users.get(s)
            ):
                k = coder_index(who)
                users.append(k)
                rows.append((k, doc, label[tid], a, b, str(coded[s]), 0))
        lab = pd.read_parquet(labels[s])
        lab = lab[lab["source"] == "assigned"]
        if len(lab) or s in coder_sets:
            k = coder_index(f"{s} (coder, {method})")
            users.append(k)
            for doc, seg, tid in lab[["transcript", "segment", "theme_id"]].itertuples(
                index=False, name=None
            ):
                a, b = span[(doc, int(seg))]
                rows.append((k, doc, label[str(tid)], a, b, str(labels[s]), int(seg)))
        for name in label.values():
            codes.append(name)
            groups[name] = sorted(set(users))
    spans = pd.DataFrame(rows, columns=SPAN_COLUMNS)
    used = set(spans["code"])
    codes = [c for c in codes if c in used]
    c = Codings(tuple(coders), codes, spans, texts)
    if not coders:
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
        ", ".join(coders),
        n["selections"],
        n["disagreements"],
    )
