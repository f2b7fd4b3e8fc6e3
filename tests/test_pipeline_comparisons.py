"""A method restricted by `comparisons:` runs only those comparisons, end to end; the demo's
judge runs on human vs llm_partial only."""

import re
import shutil

import pandas as pd
import pytest
import yaml
from helpers import REPO, job_counts, make_study, snakemake, write_config

from themesim.io.themes import read_themes_parquet
from themesim.metrics.verdicts.difference import VERDICTS
from themesim.metrics.verdicts.rarefied import agreement
from themesim.similarity import read_similarity

ONE = "human__vs__llm2"


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """The tiny study (run group llm + llm2) and a second analyst, `analyst` (reference_group;
    a copy of llm2's themes), with two TF-IDF methods: `tfidf` on every comparison (human vs
    each set, and analyst vs each run: each analyst is the reference in turn) and `tf_one`,
    the same settings, on human vs llm2."""
    root = make_study(tmp_path_factory.mktemp("restricted"))
    shutil.copy(root / "data/llm2.json", root / "data/analyst.json")
    write_config(
        root,
        [0.5],
        theme_sets=[
            {"path": "data/human.csv"},
            {"path": "data/llm.yaml", "name": "llm"},
            {"path": "data/llm2.json"},
            {"path": "data/analyst.json"},
        ],
        run_groups={"llms": ["llm", "llm2"]},
        reference_group=["human", "analyst"],
        methods={
            "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
            "tf_one": {"kind": "tfidf", "thresholds": [0.2], "comparisons": ["human vs llm2"]},
        },
    )
    dry = snakemake(root, "-n", "--cores", "2").stdout
    snakemake(root, "--cores", "2")
    return root, dry


def test_dry_run_asks_the_restricted_method_for_its_comparisons_heatmaps_only(study):
    _, dry = study
    counts = job_counts(dry)
    heatmaps = sorted(
        re.findall(r"^rule heatmap:\n(?:\s+\w+: .*\n)*?\s+wildcards: (.*)$", dry, re.MULTILINE)
    )
    assert heatmaps == [
        f"method=tf_one, pair={ONE}",
        "method=tfidf, pair=human__vs__analyst",
        "method=tfidf, pair=human__vs__llm",
        "method=tfidf, pair=human__vs__llm2",
    ]
    for rule in ("similarity_tfidf", "metrics", "grounding", "segment_labels"):
        # one plain rule, keyed by {method}
        assert counts[rule] == 2 and not [r for r in counts if r.startswith(f"{rule}_")], rule
    assert counts["runs"] == 1  # tf_one's sets hold one run of the group: no run consistency
    assert counts["set_quality"] == 2
    assert "grounding_plots" not in counts  # the grounding job draws its figures


def test_restricted_method_has_metrics_only_for_its_comparison(study):
    root, _ = study
    full = pd.read_csv(root / "results/metrics/tfidf/comparisons.csv")
    one = pd.read_csv(root / "results/metrics/tf_one/comparisons.csv")
    pairs = list(zip(full["set_a"], full["set_b"], strict=True))
    assert pairs == [("human", "llm"), ("human", "llm2"), ("human", "analyst"),
                     ("analyst", "llm"), ("analyst", "llm2")]  # fmt: skip
    assert list(zip(one["set_a"], one["set_b"], strict=True)) == [("human", "llm2")]
    # Same kind and settings: its one comparison scores exactly as the unrestricted method's
    # (within-set matrices, null pool and bootstrap of the same sets and seeds).
    same = full[(full["set_a"] == "human") & (full["set_b"] == "llm2")]
    same = same.drop(columns="method").reset_index(drop=True)
    pd.testing.assert_frame_equal(one.drop(columns="method"), same, check_dtype=False)
    for table in ("themes", "sweep"):
        df = pd.read_csv(root / f"results/metrics/tf_one/{table}.csv")
        assert set(zip(df["set_a"], df["set_b"], strict=True)) == {("human", "llm2")}, table


def test_restricted_method_makes_files_for_its_comparison_and_sets_only(study):
    root, _ = study
    sims = sorted(p.name for p in (root / "results/similarity/tf_one").glob("*.parquet"))
    assert sims == sorted([f"{ONE}.parquet", "human__vs__human.parquet", "llm2__vs__llm2.parquet"])
    assert (root / "results/similarity/tfidf/human__vs__llm.parquet").is_file()
    plans = sorted(p.name for p in (root / "results/metrics/tf_one/transport").glob("*.parquet"))
    assert plans == [f"{ONE}.parquet"]
    assert sorted(p.name for p in (root / "results/plots/tf_one").glob("*_heatmap.png")) == [
        f"{ONE}_heatmap.png"
    ]
    sets = pd.read_csv(root / "results/metrics/tf_one/sets.csv")
    assert sorted(sets["set"]) == ["human", "llm2"]
    assert sorted(pd.read_csv(root / "results/metrics/tfidf/sets.csv")["set"]) == [
        "analyst",
        "human",
        "llm",
        "llm2",
    ]
    labels = sorted(p.name for p in (root / "results/segments/tf_one").glob("*.parquet"))
    assert labels == ["human.parquet", "llm2.parquet"]
    grounded = pd.read_csv(root / "results/metrics/tf_one/grounding.csv")
    assert set(zip(grounded["set_a"], grounded["set_b"], strict=True)) == {("human", "llm2")}
    assert not (root / "results/metrics/tf_one/runs.csv").exists()
    assert (root / "results/metrics/tfidf/runs.csv").is_file()


def test_headline_and_report_show_its_rows_and_note_the_restriction(study):
    root, _ = study
    head = pd.read_csv(root / "results/report/headline.csv")
    mine = head[head["method"] == "tf_one"]
    assert list(zip(mine["set_a"], mine["set_b"], strict=True)) == [("human", "llm2")]
    assert mine["hungarian_f1"].notna().all()
    assert len(head[head["method"] == "tfidf"]) == 5
    note = "tf_one ran on 1 of 5 comparisons"
    assert note.replace("_", r"\_") in (root / "results/report/headline.tex").read_text()
    md = (root / "results/report/summary.md").read_text()
    html = (root / "results/report/summary.html").read_text()
    # under the glance table and in the method's section (Markdown escapes the "_")
    assert md.count(note.replace("_", r"\_")) == 2 and html.count(note) == 2
    assert "tfidf ran on" not in md
    # side by side (rows = comparisons): the comparison it skipped says so, never a number
    row = next(line for line in md.splitlines() if line.startswith("| human vs llm |"))
    assert row.rstrip(" |").endswith("not run")
    # its heatmap is on the comparison's own page, linked from the summary
    page = (root / f"results/report/comparisons/{ONE}.md").read_text()
    assert f"(comparisons/{ONE}.md)" in md
    assert f"../../plots/tf_one/{ONE}_heatmap.png" in page
    assert (
        not (root / "results/report/comparisons/human__vs__llm.md")
        .read_text()
        .count("plots/tf_one/")
    )  # tf_one did not run human vs llm


def test_demo_dry_run_judges_human_vs_llm_partial_only(tmp_path):
    """The demo config with the judge on: its jobs ask for one comparison's files only."""
    shutil.copytree(REPO / "config", tmp_path / "config")
    shutil.copytree(REPO / "data" / "demo", tmp_path / "data" / "demo")
    out = snakemake(tmp_path, "-n", "--cores", "2").stdout
    counts = job_counts(out)
    assert counts["similarity_judge"] == 1
    judge_files = set(re.findall(r"results/(?:similarity|plots)/judge/[^\s,]+", out))
    pairs = {
        re.search(r"(\w+?__vs__\w+?)(?:_heatmap|_iou|\.parquet)", f).group(1)
        for f in judge_files
        if "__vs__" in f
    }
    assert pairs == {"human__vs__llm_partial"}
    assert "results/similarity/judge/manifest.csv" in judge_files


def test_jobs_of_a_restricted_method_get_the_cluster_profile_settings_of_their_rule(tmp_path):
    """profiles/slurm names rules; a restricted method's jobs run under those rules and get
    the wall time, memory and threads they are given there."""
    root = make_study(tmp_path / "study")
    write_config(
        root,
        [0.5],
        methods={
            "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
            "tf_one": {"kind": "tfidf", "thresholds": [0.2], "comparisons": ["human vs llm2"]},
        },
    )
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    del profile["executor"]  # the local executor: a dry run shows each job's resources
    profile["set-threads"]["similarity_tfidf"] = 3
    local = tmp_path / "profile"
    local.mkdir()
    (local / "config.yaml").write_text(yaml.safe_dump(profile | {"cores": 4}))
    out = snakemake(root, "--dry-run", "--profile", str(local)).stdout
    given = profile["set-resources"]
    seen = []
    for block in re.split(r"\n(?=rule \w+:)", out):
        m = re.match(r"rule (\w+):", block)
        if not m or m.group(1) not in ("similarity_tfidf", "metrics", "heatmap"):
            continue
        wildcards = re.search(r"^\s+wildcards: (.*)$", block, re.MULTILINE).group(1)
        seen.append((m.group(1), wildcards))
        res = re.search(r"^\s+resources: (.*)$", block, re.MULTILINE).group(1)
        res = dict(kv.split("=", 1) for kv in res.split(", "))
        assert int(res["runtime"]) == given[m.group(1)]["runtime"], m.group(0)
        assert int(res["mem_mb"]) == given[m.group(1)]["mem_mb"], m.group(0)
        if m.group(1) == "similarity_tfidf":
            assert re.search(r"^\s+threads: 3$", block, re.MULTILINE), m.group(0)
    # each rule's job of either method, a heatmap job per method and reference pair
    mine = sorted(w for r, w in seen if "method=tf_one" in w)
    assert mine == ["method=tf_one"] * 2 + [f"method=tf_one, pair={ONE}"], seen
    assert len(seen) == 7, seen


def test_all_pairs_method_restricted_to_a_pair_without_the_reference(tmp_path):
    """comparisons.all_pairs with a method on llm vs llm2 only: its files are that pair's and
    its sets' (listed in its manifest), its heatmap sits in the other pairs' folder, and it has
    no paraphrase ceiling (which is of the reference's themes)."""
    root = make_study(tmp_path)
    write_config(
        root,
        [0.5],
        comparisons={"all_pairs": True},
        ceiling={"active": True, "k": 2},
        methods={
            "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
            "tf_llms": {"kind": "tfidf", "thresholds": [0.2], "comparisons": [["llm", "llm2"]]},
        },
    )
    dry = snakemake(root, "-n", "--cores", "2").stdout
    counts = job_counts(dry)
    assert counts["ceiling_similarity"] == 1  # tfidf's only
    assert "results/ceiling/tf_llms.parquet" not in dry
    assert counts["metrics"] == 2 and counts["heatmap"] == 2  # tfidf's
    assert "results/metrics/tf_llms/comparisons.csv" in dry
    assert not re.search(r"results/similarity/tf_llms/human__vs__", dry)
    assert "results/plots/tf_llms/heatmaps" in dry
    assert not re.search(r"results/plots/tf_llms/human__vs__\S+_heatmap", dry)
    # Run it (without the ceiling, which needs an LLM for the paraphrases).
    write_config(
        root,
        [0.5],
        comparisons={"all_pairs": True},
        methods={
            "tf_llms": {"kind": "tfidf", "thresholds": [0.2], "comparisons": ["llm vs llm2"]},
        },
    )
    snakemake(root, "--cores", "2")
    comp = pd.read_csv(root / "results/metrics/tf_llms/comparisons.csv")
    assert list(zip(comp["set_a"], comp["set_b"], strict=True)) == [("llm", "llm2")]
    listed = pd.read_csv(root / "results/similarity/tf_llms/manifest.csv")["file"].tolist()
    assert sorted(listed) == sorted(
        ["llm__vs__llm2.parquet", "llm__vs__llm.parquet", "llm2__vs__llm2.parquet"]
    )
    folder = root / "results/plots/tf_llms/heatmaps"
    assert (folder / "llm__vs__llm2_heatmap.png").is_file()
    assert not list((root / "results/plots/tf_llms").glob("human__vs__*"))
    md = (root / "results/report/summary.md").read_text()
    page = (root / "results/report/comparisons/llm__vs__llm2.md").read_text()
    assert "../../plots/tf_llms/heatmaps/llm__vs__llm2_heatmap.png" in page
    assert "tf\\_llms ran on 1 of 3 comparisons" in md


def test_verdicts_through_the_workflow(study):
    """reference_group reaches report_parts: verdicts.csv, the headline's columns, the
    workbook's sheet and the sentences that open the report; tf_one, which did not compare
    the analysts, has no verdict and says why."""
    from openpyxl import load_workbook

    root, _ = study
    verdicts = pd.read_csv(root / "results/report/verdicts.csv", keep_default_na=False)
    compared = verdicts[verdicts["role"] == "compared"]
    assert list(zip(compared["method"], compared["set_b"], strict=True)) == [
        ("tfidf", "llm"), ("tfidf", "llm2"), ("tf_one", "llm2")]  # fmt: skip
    row = compared.iloc[0]
    # a single set against the analysts is detail for the report, never a word
    assert row["second_analyst"] == "analyst" and row["verdict"] == ""
    assert set(compared["analysis"]) == {"detail"}
    comp = pd.read_csv(root / "results/metrics/tfidf/comparisons.csv")
    comp = comp[comp["set_a"] == "human"].set_index("set_b")
    assert float(row["human_human"]) == comp.loc["analyst", "hungarian_coverage_a"]
    # the run group is one generator, each analyst the reference in turn, on every route
    gen = verdicts[verdicts["role"] == "generator"]
    assert set(zip(gen["method"], gen["set_b"], gen["evidence"], strict=True)) == {
        ("tfidf", "llms", "strength"), ("tfidf", "llms", "matched"),
        ("tfidf", "llms", "segments"), ("tf_one", "llms", "strength"),
        ("tf_one", "llms", "matched"), ("tf_one", "llms", "segments")}  # fmt: skip
    # one primary row per generator, fixed before the data: the first method's first
    # threshold on the matched route; every other row a sensitivity analysis
    lead = gen[gen["primary"].astype(str) == "True"]
    assert list(zip(lead["method"], lead["evidence"], lead["analysis"], strict=True)) == [
        ("tfidf", "matched", "primary")]  # fmt: skip
    assert set(gen.loc[gen["primary"].astype(str) != "True", "analysis"]) == {"sensitivity"}
    # tf_one did not compare the analysts: withheld, with the reason
    assert gen.loc[gen["method"] == "tf_one", "withheld"].str.contains("not made").all()
    seg = gen[(gen["evidence"] == "segments") & (gen["method"] == "tfidf")].iloc[0]
    assert seg["covers"] == "themes" and seg["verdict"] in VERDICTS
    g = lead.iloc[0]
    assert (int(g["n_runs"]), int(g["n_analysts"]), g["covers"]) == (2, 2, "themes")
    assert float(g["run_sd"]) >= 0  # their spread is shown
    # the human-human agreement: both sides' best partners, read at the smallest set's size
    ids = {
        s: read_themes_parquet(root / f"results/themes/{s}.parquet")["theme_id"].tolist()
        for s in ("human", "analyst")
    }
    S = read_similarity(
        root / "results/similarity/tfidf/human__vs__analyst.parquet", ids["human"], ids["analyst"]
    )
    k = int(float(g["common_size"]))
    assert k == 2  # the analyst's two themes
    assert float(g["human_human"]) == pytest.approx(agreement((S >= 0.2).astype(float), S, k=k))
    assert g["verdict"] in VERDICTS and g["margin_source"] == "config"
    assert float(g["margin"]) == 0.1  # the default, fixed before the data
    n_a = int(row["n_a"])
    diff = (int(row["n_only_b"]) - int(row["n_only_human"])) / n_a
    assert float(row["difference"]) == diff
    assert float(row["difference_ci_low"]) <= diff <= float(row["difference_ci_high"])
    group = verdicts[verdicts["role"] == "reference group"]
    assert set(group["method"]) == {"tfidf"} and set(group["set_b"]) == {"analyst"}
    head = pd.read_csv(root / "results/report/headline.csv", keep_default_na=False)
    tfidf = head[(head["method"] == "tfidf") & (head["set_a"] == "human")]
    mine = tfidf[tfidf["set_b"] == "llm"].iloc[0]
    # each run's row carries its generator's primary word
    assert (mine["verdict"], mine["second_analyst"]) == (g["verdict"], "analyst")
    assert head.loc[head["set_b"] == "analyst", "verdict"].eq("").all()
    book = load_workbook(root / "results/report/tables.xlsx", read_only=True)
    assert book.sheetnames[:3] == ["sheets", "headline", "verdicts"]
    html = (root / "results/report/summary.html").read_text()
    opening = html[html.index('id="verdicts"') : html.index('id="at-a-glance"')]
    opening = re.sub(r'<a class="term" href="#g-[a-z-]+">([^<]*)</a>', r"\1", opening)
    assert "llms (2 runs) against 2 analysts (human, analyst)" in opening  # it leads
    assert "the second analyst analyst matches" in opening.split("<details>", 1)[1]
    # tf_one ran only human vs llm2: no analyst comparison, so no verdict, said so
    assert "did not compare human with the second analyst analyst" in opening
