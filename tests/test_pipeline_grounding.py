"""Grounding on the tiny study of test_pipeline: a coded human set, LLM sets without evidence;
every set also labelled by the automatic coder (source `assigned`)."""

import re

import pandas as pd
import pytest
import yaml
from helpers import job_counts, make_study, qdpx_study, snakemake, write_config

from themesim.metrics.grounding.grounding_shift import PRINTED_P, TEST_METRICS

# Offsets in sam.txt: "Interviewer: How do you manage work?\n" is 37 characters, so Sam's
# first turn starts at 37; "I changed my shifts" starts 5 characters later at 42.
CODED = """document,theme,text,start,end,coder
sam,Caring while working,I changed my shifts,42,61,ann
sam,H3,the care bills are a worry,,,ann
"""
TARGETS = [
    "results/metrics/minilm/grounding.csv",
    "results/metrics/tfidf/grounding.csv",
    "results/metrics/judge/grounding.csv",
    "results/grounding/coder_agreement.csv",
]


def configure(root, assign_threshold=None, **grounding):
    extra = {"grounding": grounding} if grounding else {}
    write_config(root, [0.5], **extra)
    path = root / "config" / "config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["theme_sets"][0]["segments"] = "data/human_coded.csv"
    if assign_threshold is not None:
        cfg["methods"]["tfidf"]["assign_threshold"] = assign_threshold
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = make_study(tmp_path_factory.mktemp("grounding"))
    (root / "data" / "human_coded.csv").write_text(CODED)
    configure(root)
    snakemake(root, "--cores", "2", *TARGETS)
    return root


def test_labels_are_the_coded_segments(study):
    labels = pd.read_parquet(study / "results/segments/minilm/human.parquet")
    coded = labels[labels["source"] == "coded"]
    # segment 1 is Sam's first turn, segment 3 the second
    assert coded[["segment", "theme_id", "source"]].values.tolist() == [
        [1, "H1", "coded"],
        [3, "H3", "coded"],
    ]
    # the coder codes the human set too (blind), one theme per participant turn at most
    coder = labels[labels["source"] == "assigned"]
    assert set(coder["segment"]) <= {1, 3} and not coder["segment"].duplicated().any()
    llm = pd.read_parquet(study / "results/segments/minilm/llm.parquet")
    assert set(llm["source"]) <= {"assigned"}
    assert (llm["score"] >= 0.2).all()  # the default assign_threshold
    assert not set(llm["segment"]) & {0, 2}  # interviewer questions are never coded
    assert not llm["segment"].duplicated().any()  # top1
    judge = pd.read_parquet(study / "results/segments/judge/llm.parquet")
    assert judge.empty  # the judge scores no segments and llm has no quotes


def test_grounding_tables(study):
    g = pd.read_csv(study / "results/metrics/minilm/grounding.csv")
    assert g[["set_a", "set_b", "grounding_basis"]].values.tolist() == [
        ["human", "llm", "coder"],  # llm carries no evidence: no evidence row
        ["human", "llm2", "coder"],
    ]
    assert (g["n_segments"] == 4).all()
    human = pd.read_parquet(study / "results/segments/minilm/human.parquet")
    coded_by_coder = human.loc[human["source"] == "assigned", "segment"].nunique()
    assert (g["data_coverage_a"] == coded_by_coder / 4).all()  # the coder's labels, not 2/4
    assert g["sources_a"].tolist() == ["assigned", "assigned"]
    assert (g["coder_a"] == "similarity (top1 centred ≥ 0.2)").all()  # minilm's default
    assert (g["coder_a"] == g["coder_b"]).all() and g["basis_note"].isna().all()
    # One transcript: no transcript-level interval, and the row says why. B's rows rotate
    # within each speaker's two turns: the interviewer's, never coded, stay; Sam's two trade
    # places when B labels them differently (2 arrangements, enumerated), else stay (1).
    assert (g["n_transcripts"] == 1).all() and (g["ci_method"] == "none (one transcript)").all()
    assert g["ami_ci_low"].isna().all()
    # ... and no chance-corrected figure over one transcript (it showed "AMI 1.00"): NaN,
    # with the reason in withheld_reason
    assert g["ami"].isna().all() and g["text_pairs_krippendorff_alpha"].isna().all()
    assert g["withheld_reason"].str.contains("not given over 1 transcript").all()
    if not PRINTED_P:  # no statistic's p is given, so the study draws no shift test
        assert g["p_method"].str.endswith("not drawn").all()
        assert (g["n_permutations"] == 0).all()
        assert g[[f"{m}_p" for m in TEST_METRICS]].isna().all().all()
    else:
        assert g["p_method"].str.startswith("run_preserving_cyclic_shift_exact; p given").all()
        for set_b, n_arrangements in zip(g["set_b"], g["n_permutations"], strict=True):
            b = pd.read_parquet(study / f"results/segments/minilm/{set_b}.parquet")
            b = b[b["source"] == "assigned"]
            turns = [set(b.loc[b["segment"] == s, "theme_id"]) for s in (1, 3)]
            assert n_arrangements == (2 if turns[0] != turns[1] else 1)
    pairs = pd.read_csv(study / "results/metrics/minilm/grounding_pairs.csv")
    assert list(pairs.columns) == [
        "method",
        "set_a",
        "set_b",
        "grounding_basis",
        "a_id",
        "b_id",
        "n_a",
        "n_b",
        "n_both",
        "iou",
        "kappa",
    ]
    assert len(pairs) == 4 * 3 + 4 * 2
    h1 = pairs[(pairs.set_b == "llm") & (pairs.a_id == "H1")]
    assert (h1["iou"] == h1["n_both"] / (h1["n_a"] + h1["n_b"] - h1["n_both"])).fillna(0).all()
    long = pd.read_parquet(study / "results/metrics/minilm/grounding/human__vs__llm.parquet")
    assert len(long) == 12 and "text_pair" in long.columns
    # the judge's coder labels nothing: its data figures are missing, not 0
    judge = pd.read_csv(study / "results/metrics/judge/grounding.csv")
    assert judge["grounding_basis"].tolist() == ["coder", "coder"]
    assert judge["data_coverage_b"].isna().all() and judge["text_hungarian_f1"].notna().all()
    assert judge["basis_note"].str.contains("no coder labels for human and llm").all()


def test_coder_agreement_per_method_and_set(study):
    t = pd.read_csv(study / "results/grounding/coder_agreement.csv")
    overall = t[t["level"] == "overall"].set_index(["method", "set"])
    assert overall.loc[("minilm", "human"), "status"] == "checked"
    assert overall.loc[("minilm", "llm"), "status"] == "unchecked"
    assert overall.loc[("judge", "human"), "status"] == "no coder"
    themes = t[(t["method"] == "tfidf") & (t["set"] == "human") & (t["level"] == "theme")]
    assert len(themes) == 4 and (themes["n_segments"] == 2).all()  # Sam's two turns
    assert (themes["n_human"].sum(), themes["prevalence_human"].sum()) == (2, 1.0)


def test_grounding_settings_rerun_no_embedding(study):
    configure(study, assign_threshold=0.05, min_iou=0.5, assign="always")
    counts = job_counts(snakemake(study, "-n", "--cores", "2", *TARGETS).stdout)
    assert not any(k.startswith(("embed", "similarity", "ingest")) for k in counts), counts
    # one labels job per method: coder_agreement reads every method's labels (abtt's too)
    assert counts["grounding"] == 3 and counts["segment_labels"] == 4
    assert counts["coder_agreement"] == 1
    configure(study)


def test_qdpx_sources_become_the_transcripts(tmp_path):
    """A .qdpx set and no `transcripts:`: the project's sources are the transcripts, and its
    selections land on the segments of those texts."""
    from helpers import TEXT_B

    text_a = qdpx_study(tmp_path)
    target = "results/metrics/tfidf/grounding.csv"
    counts = job_counts(snakemake(tmp_path, "-n", "--cores", "2", target).stdout)
    assert counts["qdpx_transcripts"] == 1 and counts["ingest_transcripts"] == 1, counts
    snakemake(tmp_path, "--cores", "2", target)
    sources = tmp_path / "results" / "transcripts" / "sources"
    assert sorted(p.name for p in sources.iterdir()) == ["amira.txt", "dennis.txt"]
    assert (sources / "amira.txt").read_text(encoding="utf-8") == text_a
    assert (sources / "dennis.txt").read_text(encoding="utf-8") == TEXT_B
    segments = pd.read_parquet(tmp_path / "results/transcripts/segments.parquet")
    assert segments[["transcript", "segment", "speaker"]].values.tolist() == [
        ["amira", 0, "Interviewer"],
        ["amira", 1, "Amira"],
        ["amira", 2, "Interviewer"],
        ["amira", 3, "Amira"],
        ["dennis", 0, ""],  # one line: "Dennis:" is not taken for a speaker
    ]
    labels = pd.read_parquet(tmp_path / "results/segments/tfidf/human.parquet")
    coded = labels[labels["source"] == "coded"]
    # "Badly." (33-39) and "I cut my hours" (40-54) lie in Amira's turn, which starts at 26.
    assert coded[["transcript", "segment", "theme_id", "source"]].values.tolist() == [
        ["amira", 1, "c-health", "coded"],
        ["amira", 1, "c-hours", "coded"],
        ["amira", 1, "c-work", "coded"],
        ["dennis", 0, "c-health", "coded"],
    ]
    g = pd.read_csv(tmp_path / target)
    assert g["n_segments"].tolist() == [5] and g["grounding_basis"].tolist() == ["coder"]
    by_coder = labels.loc[labels["source"] == "assigned", ["transcript", "segment"]]
    assert g["data_coverage_a"].tolist() == [len(by_coder.drop_duplicates()) / 5]


def test_a_qdpx_study_finishes_all_and_archive(tmp_path):
    """Regression (issue 24.1): the summary report read every theme file as a plain theme
    file and stopped at "unsupported theme file type '.qdpx'"; it now counts the themes of
    the ingested table, so `all` and `archive` finish and the report lists the project."""
    import zipfile

    qdpx_study(tmp_path)
    snakemake(tmp_path, "--cores", "2")
    md = (tmp_path / "results/report/summary.md").read_text(encoding="utf-8")
    # Work, Cutting hours and Own health at level "all"; the LLM set's three themes.
    assert re.search(r"\| data/coded\.qdpx \| themes \| 3 \| [0-9a-f]{12}", md), md
    assert re.search(r"\| data/llm\.yaml \| themes \| 3 \| [0-9a-f]{12}", md), md
    snakemake(tmp_path, "--cores", "2", "archive")
    (zipped,) = (tmp_path / "results" / "archive").glob("*.zip")
    names = set(zipfile.ZipFile(zipped).namelist())
    assert {"data/coded.qdpx", "data/llm.yaml", "results/report/summary.html"} <= names
