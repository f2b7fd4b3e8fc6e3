"""All pairs without a per-pair DAG: the similarity and metrics jobs declare a folder of pair
files and its manifest, which lists every pair's file."""

import hashlib
import zipfile

import pytest
from helpers import job_counts, make_study, snakemake, write_config

SIM = "results/similarity/tfidf"
PLANS = "results/metrics/tfidf/transport"
PAIRS = ["human__vs__llm", "human__vs__llm2", "llm__vs__llm2"]
WITHIN = ["human__vs__human", "llm__vs__llm", "llm2__vs__llm2"]


def config(root, threshold):
    write_config(
        root,
        [0.5],
        methods={"tfidf": {"kind": "tfidf", "thresholds": [threshold]}},
        comparisons={"all_pairs": True},
        transcripts=[],
    )


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = make_study(tmp_path_factory.mktemp("pairs"))
    config(root, 0.2)
    snakemake(root, "--cores", "2")
    return root


def manifest(path):
    lines = path.read_text().splitlines()
    assert lines[0] == "file,sha256"
    return dict(line.split(",") for line in lines[1:])


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_pair_file_at_its_path_and_in_the_manifest(study):
    sims = manifest(study / SIM / "manifest.csv")
    assert list(sims) == [f"{p}.parquet" for p in PAIRS + WITHIN]
    for name, digest in sims.items():
        assert digest == sha(study / SIM / name)
    plans = manifest(study / PLANS / "manifest.csv")
    assert list(plans) == [f"{p}.parquet" for p in PAIRS]
    for name, digest in plans.items():
        assert digest == sha(study / PLANS / name)
    # Snakemake knows the folders and their manifests, not one pair file.
    summary = snakemake(study, "--summary").stdout
    declared = {line.split("\t")[0] for line in summary.splitlines()[1:]}
    assert {f"{SIM}/manifest.csv", f"{PLANS}/manifest.csv", SIM, PLANS} <= declared
    assert not [d for d in declared if "__vs__" in d and "heatmap" not in d]
    assert not [d for d in declared if "llm__vs__llm2" in d and "heatmap" not in d]


def test_a_deleted_pair_file_is_named_and_its_manifest_redoes_the_folder(study):
    """The pair files are folder outputs of their job: a file deleted in one stops its
    reader (here the archive) with one line naming it and what to do, which reruns the job
    with the same bytes."""
    for folder in (SIM, PLANS):
        path = study / folder / "llm__vs__llm2.parquet"
        before = path.read_bytes()
        path.unlink()
        proc = snakemake(study, "--cores", "1", "archive", check=False)
        assert proc.returncode != 0
        log = (study / "logs/archive/archive.log").read_text()
        assert "llm__vs__llm2.parquet: is missing" in log
        assert f"Delete {folder}/manifest.csv and run snakemake again" in log
        (study / folder / "manifest.csv").unlink()
        snakemake(study, "--cores", "2")
        assert path.read_bytes() == before
    assert "Nothing to be done" in snakemake(study, "-n", "--cores", "2").stdout


def test_a_changed_pair_file_fails_clearly_until_its_manifest_is_deleted(study):
    path = study / SIM / "llm__vs__llm2.parquet"
    before = path.read_bytes()
    path.write_bytes((study / SIM / "human__vs__llm.parquet").read_bytes())
    proc = snakemake(study, "--cores", "2", "--forcerun", "metrics", check=False)
    assert proc.returncode != 0
    log = (study / "logs/metrics/tfidf.log").read_text()
    assert "llm__vs__llm2.parquet: has changed since its job wrote it" in log
    assert f"Delete {SIM}/manifest.csv and run snakemake again" in log
    (study / SIM / "manifest.csv").unlink()
    snakemake(study, "--cores", "2")
    assert path.read_bytes() == before


def test_a_hand_edited_metric_table_never_reaches_the_headline(study):
    """A results table is checked against the sha256 its job recorded (`.name.sha256`,
    themesim.io.manifest): an edited hungarian_f1 stops the report's job with one line naming
    the file; deleting the table rebuilds it byte-identically, and the run then passes."""
    table = study / "results/metrics/tfidf/comparisons.csv"
    headline = study / "results/report/headline.csv"
    before, head_before = table.read_bytes(), headline.read_bytes()
    assert (table.parent / ".comparisons.csv.sha256").is_file()
    lines = table.read_text().splitlines()
    col = lines[0].split(",").index("hungarian_f1")
    cells = lines[1].split(",")
    cells[col] = "0.999"
    table.write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")
    proc = snakemake(study, "--cores", "2", check=False)
    assert proc.returncode != 0
    # the jobs that read the table (verdicts, report_parts) stop, each with one line
    logs = [study / "logs/report" / f"{job}.log" for job in ("verdicts", "report_parts")]
    texts = [t for t in (log.read_text() for log in logs if log.is_file()) if t.strip()]
    lines = [x for text in texts for x in text.splitlines() if "has changed since" in x]
    assert lines and len(lines) == len(texts)
    for line in lines:
        assert "results/metrics/tfidf/comparisons.csv: has changed" in line
        assert "Delete results/metrics/tfidf/comparisons.csv and run snakemake again" in line
    assert not any("Traceback" in text for text in texts)
    assert not headline.exists() or b"0.999" not in headline.read_bytes()
    table.unlink()
    snakemake(study, "--cores", "2")
    assert table.read_bytes() == before  # rebuilt by its rule, the same bytes
    assert headline.read_bytes() == head_before
    assert "Nothing to be done" in snakemake(study, "-n", "--cores", "2").stdout


def test_a_threshold_change_reruns_no_similarity(study):
    config(study, 0.3)
    try:
        counts = job_counts(snakemake(study, "-n", "--cores", "2").stdout)
        assert "similarity_tfidf" not in counts
        assert counts["metrics"] == 1 and counts["report_parts"] == 1
    finally:
        config(study, 0.2)


def test_the_archive_packs_the_listed_pair_files(study):
    snakemake(study, "--cores", "1", "archive")
    (zip_path,) = (study / "results/archive").glob("*.zip")
    with zipfile.ZipFile(zip_path) as z:
        names = set(z.namelist())
        for folder in (SIM, PLANS):
            assert f"{folder}/manifest.csv" in names
            assert f"{folder}/llm__vs__llm2.parquet" in names
            data = z.read(f"{folder}/llm__vs__llm2.parquet")
            assert data == (study / folder / "llm__vs__llm2.parquet").read_bytes()


def test_above_max_pair_heatmaps_the_folder_holds_one_overview(tmp_path):
    """plots.max_pair_heatmaps: 0: llm vs llm2 gets no heatmap; the folder holds the
    clustered F1 overview of every set and a README, and the report shows the overview."""
    root = make_study(tmp_path)
    write_config(
        root,
        [0.5],
        methods={"tfidf": {"kind": "tfidf", "thresholds": [0.2]}},
        comparisons={"all_pairs": True},
        transcripts=[],
        plots={"max_pair_heatmaps": 0},
    )
    snakemake(root, "--cores", "2")
    plots = root / "results/plots/tfidf"
    folder = sorted(p.name for p in (plots / "heatmaps").iterdir() if p.name[0] != ".")
    assert folder == ["README.txt", "overview.png", "overview.svg"]
    readme = (plots / "heatmaps/README.txt").read_text()
    assert "plots.max_pair_heatmaps (0)" in readme and "1 pairs" in readme
    # Reference pairs keep their heatmaps.
    assert sorted(p.name for p in plots.glob("*_heatmap.png")) == [
        "human__vs__llm2_heatmap.png",
        "human__vs__llm_heatmap.png",
    ]
    md = (root / "results/report/summary.md").read_text()
    assert "../plots/tfidf/heatmaps/overview.png" in md
    assert "llm__vs__llm2_heatmap" not in md
    html = (root / "results/report/summary.html").read_text()
    assert "Hungarian F1 of every pair of sets, method tfidf" in html
    # Lifting the limit redraws only the folder, now with the pair's heatmap.
    write_config(
        root,
        [0.5],
        methods={"tfidf": {"kind": "tfidf", "thresholds": [0.2]}},
        comparisons={"all_pairs": True},
        transcripts=[],
        plots={"max_pair_heatmaps": None},
    )
    counts = job_counts(snakemake(root, "-n", "--cores", "2").stdout)
    assert counts.get("pair_heatmaps") == 1 and "metrics" not in counts, counts
    snakemake(root, "--cores", "2")
    folder = sorted(p.name for p in (plots / "heatmaps").iterdir() if p.name[0] != ".")
    assert folder == ["llm__vs__llm2_heatmap.png", "llm__vs__llm2_heatmap.svg"]


def test_above_max_pair_panels_figures_and_report_show_the_reference_and_a_summary(tmp_path):
    """plots.max_pair_panels: 1 of 3 comparisons: the sweep draws human vs llm and one panel
    of all 3; the report keeps that comparison's section and says where the rest are; the
    setting redraws figures and the report, never the metrics."""
    root = make_study(tmp_path)
    settings = {
        "methods": {"tfidf": {"kind": "tfidf", "thresholds": [0.2]}},
        "comparisons": {"all_pairs": True},
        "transcripts": [],
    }
    write_config(root, [0.5], **settings, plots={"max_pair_panels": 1})
    snakemake(root, "--cores", "2")
    md = (root / "results/report/summary.md").read_text()
    assert "This method has 3 comparisons, more than `plots.max_pair_panels` (1)" in md
    assert "[human vs llm](comparisons/human__vs__llm.md)" in md
    assert "human__vs__llm2.md" not in md and "llm__vs__llm2.md" not in md
    html = (root / "results/report/summary.html").read_text()
    assert "more than <code>plots.max_pair_panels</code> (1)" in html
    write_config(root, [0.5], **settings, plots={"max_pair_panels": None})
    counts = job_counts(snakemake(root, "-n", "--cores", "2").stdout)
    assert "metrics" not in counts and "similarity_tfidf" not in counts, counts
    assert counts.get("report_parts") == 1, counts
    assert counts.get("summary_report") == 1, counts
