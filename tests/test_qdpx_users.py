"""A .qdpx theme set coded by two or more users (issue 34, part 4): one set per user
(`user:`), or the config refused at parse time; never one set of merged codings. themesim's
own disagreement marks (io/qdpx_export.py) are no theme and no coded segment."""

import logging

import pandas as pd
import pytest
from helpers import REPO, TEXT_A, TEXT_B, make_qdpx

from themesim.config import prepare
from themesim.errors import InputError
from themesim.io.qdpx_export import (
    DISAGREEMENT_PARENT,
    DISAGREEMENT_PARENT_NAME,
    DISAGREEMENT_USER,
    DISAGREEMENT_USER_NAME,
)
from themesim.io.refi_qda import read_qdpx, study_project
from themesim.schema import check_schema
from themesim.steps import ingest, ingest_transcripts
from themesim.steps.segment_labels import Coding, SetFiles, segment_labels

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"

# Anna codes "I cut my hours" (40-54) as Cutting hours; Ben codes "Badly." (33-39) as Own
# health and Dennis's line (7-29) as Own health. themesim's export marked where they differ.
TWO_USERS = f"""<?xml version="1.0" encoding="utf-8"?>
<Project xmlns="urn:QDA-XML:project:1.0" name="demo" origin="test">
  <Users>
    <User guid="u-anna" name="anna"/>
    <User guid="u-ben" name="ben"/>
    <User guid="{DISAGREEMENT_USER}" name="{DISAGREEMENT_USER_NAME}"/>
  </Users>
  <CodeBook><Codes>
    <Code guid="c-work" name="Work" isCodable="true">
      <Description>Paid work and caring</Description>
      <Code guid="c-hours" name="Cutting hours" isCodable="true"/>
    </Code>
    <Code guid="c-health" name="Own health" isCodable="true"/>
    <Code guid="{DISAGREEMENT_PARENT}" name="{DISAGREEMENT_PARENT_NAME}" isCodable="false">
      <Code guid="d-1" name="Own health: ben only" isCodable="true"/>
    </Code>
  </Codes></CodeBook>
  <Sources>
    <TextSource guid="s1" name="amira.txt">
      <PlainTextContent>{TEXT_A}</PlainTextContent>
      <PlainTextSelection guid="p1" startPosition="40" endPosition="54" creatingUser="u-anna">
        <Coding guid="k1" creatingUser="u-anna"><CodeRef targetGUID="c-hours"/></Coding>
      </PlainTextSelection>
      <PlainTextSelection guid="p2" startPosition="33" endPosition="39" creatingUser="u-ben">
        <Coding guid="k2" creatingUser="u-ben"><CodeRef targetGUID="c-health"/></Coding>
      </PlainTextSelection>
      <PlainTextSelection guid="p3" startPosition="33" endPosition="39">
        <Coding guid="k3" creatingUser="{DISAGREEMENT_USER}"><CodeRef targetGUID="d-1"/></Coding>
      </PlainTextSelection>
    </TextSource>
    <TextSource guid="s2" name="dennis" plainTextPath="internal://s2.txt">
      <PlainTextSelection guid="p4" startPosition="8" endPosition="29" creatingUser="u-ben">
        <Coding guid="k4" creatingUser="u-ben"><CodeRef targetGUID="c-health"/></Coding>
      </PlainTextSelection>
    </TextSource>
  </Sources>
</Project>"""

LLM = """themes:
  - name: Hours
    description: Cutting working hours to care
  - name: Sleep
    description: Not sleeping through the night
"""


def project(root, xml=TWO_USERS):
    (root / "data").mkdir(exist_ok=True)
    make_qdpx(root / "data", xml, name="proj.qdpx")
    (root / "data" / "llm.yaml").write_text(LLM)
    return "data/proj.qdpx"


def config(*entries, **extra):
    return {
        "theme_sets": [*entries, "data/llm.yaml"],
        "methods": {"tfidf": {"kind": "tfidf", "thresholds": [0.2]}},
    } | extra


def prepared(cfg):
    check_schema(cfg, SCHEMA)
    return prepare(cfg)


def test_two_users_without_user_are_refused_at_parse_time(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = project(tmp_path)
    with pytest.raises(InputError) as e:
        prepared(config(path))
    message = str(e.value)
    assert "\n" not in message
    assert message == (
        "config theme_sets[0] (data/proj.qdpx): is coded by 2 users ('anna', 'ben'), whose "
        "codings would be merged into one theme set. give user: NAME, or list the file once "
        "per user with name: <set>@<user> and user: <user> (e.g. name: proj@anna, user: anna)"
    )
    # themesim's disagreement user is no third user; with a name: the entry says so too
    with pytest.raises(InputError, match=r"theme_sets\[0\] .*2 users .*name: human@anna"):
        prepared(config({"path": path, "name": "human"}))


def test_each_user_is_a_set_of_their_own_codings(tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    path = project(tmp_path)
    study = prepared(
        config(
            {"path": path, "name": "proj@anna", "user": "anna"},
            {"path": path, "name": "proj@ben", "user": "u-ben"},  # a guid does as well
            reference="proj@anna",
        )
    )
    assert list(study.sets) == ["proj@anna", "proj@ben", "llm"]
    assert study.users == {"proj@anna": "anna", "proj@ben": "u-ben"}
    assert study.segments == {"proj@anna": path, "proj@ben": path}
    caplog.set_level(logging.INFO)
    anna, ben = study_project(path, "all", "anna"), study_project(path, "all", "u-ben")
    assert anna.coded[["document", "theme_id", "text"]].values.tolist() == [
        ["amira", "c-hours", "I cut my hours"]
    ]
    assert ben.coded[["document", "theme_id", "start", "end"]].values.tolist() == [
        ["amira", "c-health", 33, 39],
        ["dennis", "c-health", 8, 29],
    ]
    # the code book is the themes of both, without themesim's disagreement codes
    for p in (anna, ben):
        assert p.themes["theme_id"].tolist() == ["c-work", "c-hours", "c-health"]
    assert "themesim wrote to mark disagreements" in caplog.text
    # read plainly, the project still holds them (`themesim agree` leaves them out itself)
    assert "d-1" in read_qdpx(path).themes["theme_id"].tolist()
    top = study_project(path, "top", "anna")
    assert top.themes["theme_id"].tolist() == ["c-work", "c-health"]


@pytest.mark.parametrize(
    "user, fragments",
    [
        (
            "Ana",
            [
                "config theme_sets[0].user (data/proj.qdpx): user 'Ana' has no codings in the "
                "project (did you mean 'anna'?)",
                "Give user: one of the project's users by name or guid: its users with "
                "codings are 'anna', 'ben'",
            ],
        ),
        ("carl", ["user 'carl' has no codings in the project.", "'anna', 'ben'"]),
        (DISAGREEMENT_USER_NAME, ["user 'themesim (disagreements)' has no codings"]),
    ],
)
def test_a_user_the_project_lacks_is_refused(tmp_path, monkeypatch, user, fragments):
    monkeypatch.chdir(tmp_path)
    path = project(tmp_path)
    with pytest.raises(InputError) as e:
        prepared(config({"path": path, "name": "proj@x", "user": user}))
    assert "\n" not in str(e.value)
    for f in fragments:
        assert f in str(e.value)


def test_user_on_a_set_without_qdpx_codings_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = project(tmp_path)
    with pytest.raises(
        InputError, match=r"theme_sets\[1\].user \(data/llm.yaml\): user: picks a .qdpx"
    ):
        prepared(
            config({"path": path, "name": "p@anna", "user": "anna"})
            | {
                "theme_sets": [
                    {"path": path, "name": "p@anna", "user": "anna"},
                    {"path": "data/llm.yaml", "user": "anna"},
                ]
            }
        )


def test_one_user_or_none_works_as_today(tmp_path, monkeypatch):
    from helpers import B_INTERNAL, project_xml

    monkeypatch.chdir(tmp_path)
    path = project(tmp_path, project_xml(B_INTERNAL))  # u1 and codings without a user
    study = prepared(config(path))
    assert study.users == {} and study.segments == {"proj": path}
    assert len(study_project(path).coded) == 4
    # naming the one user keeps only that user's codings
    study = prepared(config({"path": path, "user": "u1"}))
    assert study.users == {"proj": "u1"}
    assert study_project(path, "all", "u1").coded["theme_id"].tolist() == ["c-hours"]


def test_the_labelling_step_reads_each_users_codings(tmp_path, monkeypatch):
    """The step function of rule segment_labels (and the qdpx export's spans): proj@anna and
    proj@ben from one file get different coded segments."""
    from themesim.steps.qdpx import _human_spans

    monkeypatch.chdir(tmp_path)
    path = project(tmp_path)
    (tmp_path / "tx").mkdir()
    (tmp_path / "tx" / "amira.txt").write_text(TEXT_A)
    (tmp_path / "tx" / "dennis.txt").write_text(TEXT_B)
    transcripts = ["tx/amira.txt", "tx/dennis.txt"]
    ingest_transcripts.ingest_transcripts(transcripts, "work/segments.parquet")
    coded = {}
    for s, user in (("proj@anna", "anna"), ("proj@ben", "ben"), ("proj", None)):
        ingest.ingest_themes(
            path, f"work/{s}.parquet", set_name=s, template="{name}: {description}"
        )
        segment_labels(
            set_name=s,
            files=SetFiles(
                themes=f"work/{s}.parquet",
                coded=path,
                user=user,
                out=f"out/{s}.parquet",
                out_quotes=f"out/{s}.quotes.csv",
            ),
            coding=Coding(method="m", spec={"kind": "tfidf"}, assign="never"),
            segments_path="work/segments.parquet",
            transcripts=transcripts,
        )
        labels = pd.read_parquet(f"out/{s}.parquet")
        coded[s] = labels[["transcript", "segment", "theme_id"]].values.tolist()
        themes = pd.read_parquet(f"work/{s}.parquet")
        assert themes["theme_id"].tolist() == ["c-work", "c-hours", "c-health"]
    # each transcript is one segment here (its reader finds no speaker turns)
    assert coded["proj@anna"] == [["amira", 0, "c-hours"]]
    assert coded["proj@ben"] == [["amira", 0, "c-health"], ["dennis", 0, "c-health"]]
    assert coded["proj"] == [  # the step alone, no user: every user's codings, no marks
        ["amira", 0, "c-health"],
        ["amira", 0, "c-hours"],
        ["dennis", 0, "c-health"],
    ]
    texts = {"amira": TEXT_A, "dennis": TEXT_B}
    themes = pd.read_parquet("work/proj@ben.parquet")
    assert _human_spans("proj@ben", path, "all", themes, texts, "ben") == [
        ("ben", "amira", "c-health", 33, 39),
        ("ben", "dennis", "c-health", 8, 29),
    ]


def test_pipeline_two_users_of_one_file_are_two_sets(tmp_path):
    """A real run: `proj@anna` and `proj@ben` from one .qdpx (its sources the transcripts)
    get their own user's coded segments; without user: `snakemake -n` stops in one line."""
    import yaml
    from helpers import snakemake

    path = project(tmp_path)
    cfg = config(
        {"path": path, "name": "proj@anna", "user": "anna"},
        {"path": path, "name": "proj@ben", "user": "ben"},
        metrics={"bootstrap": {"n": 0, "seed": 1}, "null_model": {"k": 0, "seed": 2}},
        grounding={"bootstrap": 0, "assign": "never"},
    )
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    labels = ["results/segments/tfidf/proj@anna.parquet", "results/segments/tfidf/proj@ben.parquet"]
    snakemake(tmp_path, "--cores", "2", "results/segments/tfidf")  # the labels job's folder
    coded = {}
    for f in labels:
        t = pd.read_parquet(tmp_path / f)
        coded[f] = t.loc[t["source"] == "coded", ["transcript", "theme_id"]].values.tolist()
    assert coded[labels[0]] == [["amira", "c-hours"]]
    assert coded[labels[1]] == [["amira", "c-health"], ["dennis", "c-health"]]
    # `snakemake qdpx`: each user's codings under their own set's codes only
    from themesim.io.qdpx_export import DISAGREEMENT_USER
    from themesim.io.refi_qda import read_qdpx as read

    snakemake(tmp_path, "--cores", "2", "qdpx")
    out = read(tmp_path / "results" / "qdpx" / "tfidf.qdpx")
    mine = out.coded[out.coded["coder"] != DISAGREEMENT_USER]
    who = {(out.users[u], out.paths[t]) for u, t in mine[["coder", "theme_id"]].values}
    assert who == {
        ("anna", "proj@anna/Cutting hours"),
        ("ben", "proj@ben/Own health"),
    }

    cfg["theme_sets"] = [path, "data/llm.yaml"]
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    proc = snakemake(tmp_path, "-n", check=False)
    assert proc.returncode != 0
    last = (proc.stdout + proc.stderr).strip().splitlines()[-1]
    assert "config theme_sets[0] (data/proj.qdpx): is coded by 2 users ('anna', 'ben')" in last
    assert "give user: NAME, or list the file once per user" in last
