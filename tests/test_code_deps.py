"""Exact code dependencies: a rule's `code=` inputs are the package files its script runs
(themesim.deps), so an edit to a module reruns exactly the rules that use it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, job_counts, snakemake, snakemake_env, write_config, write_data

from themesim.deps import code_digest, script_code, script_modules

SRC = REPO / "src" / "themesim"
SCRIPTS = REPO / "scripts"


def modules(script: str) -> list[str]:
    return script_modules(SCRIPTS / script, SRC)


# ---------------------------------------------------------------- themesim.deps itself


def test_the_walk_keeps_no_syntax_tree():
    # Every Snakemake process walks the package at its start where the cache file is
    # missing; trees kept for reuse (~300,000 objects) made its end take about 1 s.
    import ast
    import gc

    import themesim.deps as deps

    def trees() -> int:
        gc.collect()
        return sum(issubclass(type(o), ast.AST) for o in gc.get_objects())

    before = trees()
    deps._parsed.cache_clear()
    for script in sorted(SCRIPTS.glob("*.py")):
        script_code(script, SRC)
    assert deps._parsed.cache_info().currsize > 150  # every module reached, parsed once
    assert trees() <= before


def test_embed_script_runs_no_plot_or_metric_module():
    embed = modules("embed.py")
    assert "themesim.steps.embed" in embed and "themesim.embed.encode" in embed
    assert "themesim.report.plots" not in embed
    assert "themesim.metrics.sets.coverage" not in embed
    assert not [m for m in embed if m.startswith(("themesim.report", "themesim.metrics"))]


def test_plot_and_metric_scripts_run_their_modules():
    assert "themesim.report.plots" in modules("heatmap.py")
    assert "themesim.metrics.sets.coverage" in modules("heatmap.py")  # the heatmap marks matches
    metrics = modules("metrics.py")
    assert (
        "themesim.metrics.sets.coverage" in metrics
        and "themesim.metrics.intervals.intervals" in metrics
    )
    assert "themesim.report.plots" not in metrics
    for script in ("similarity.py", "ingest_themes.py", "embed.py"):
        assert "themesim.metrics.sets.coverage" not in modules(script), script
        assert "themesim.report.plots" not in modules(script), script


def test_report_parts_runs_its_steps_not_the_heatmaps():
    """One job for many steps still depends only on the functions its script calls, and on
    the drawing functions report/figures.py names for it."""
    parts = modules("report_parts.py")
    for module in (
        "themesim.report.headline",
        "themesim.report.plots.sweep",  # the sweep reads a table: no coverage (below)
        "themesim.report.plots.distributions",
        "themesim.report.plots.theme_map",
    ):
        assert module in parts, module
    assert "themesim.report.plots.heatmap" not in parts
    assert "themesim.metrics.sets.coverage" not in parts  # the heatmaps' one-to-one pairs
    assert "themesim.metrics.method_scale" not in parts


def test_a_named_function_counts_as_an_import(tmp_path):
    """A registry's "themesim.module:function" string, imported by importlib where it is
    used, brings its module as an import would; other strings bring nothing."""
    pkg = tmp_path / "themesim"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "drawn.py").write_text("def draw():\n    pass\n")
    (pkg / "table.py").write_text(
        'ENTRIES = ["themesim.drawn:draw", "themesim.drawn", "see themesim.other:x"]\n'
    )
    (pkg / "step.py").write_text("def run():\n    from themesim.table import ENTRIES\n")
    script = tmp_path / "script.py"
    script.write_text("from themesim.step import run\n")
    found = script_modules(script, pkg)
    assert found == ["themesim", "themesim.drawn", "themesim.step", "themesim.table"]


def test_every_script_has_existing_code_files():
    for script in sorted(SCRIPTS.glob("*.py")):
        files = script_code(script, SRC)
        assert files, script.name
        assert all(Path(f).is_file() and Path(f).is_relative_to(SRC) for f in files), script.name
        assert str(SRC / "__init__.py") in files  # the package's __init__ always runs


def test_only_the_called_functions_count(tmp_path):
    """A script that imports one step function depends on what that function (and the helpers
    it calls) imports, including imports inside functions, not on its module's other steps."""
    pkg = tmp_path / "themesim"
    for sub in ("", "steps", "lib"):
        (pkg / sub).mkdir(exist_ok=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "lib" / "used.py").write_text("from themesim.lib import deep\n")
    (pkg / "lib" / "deep.py").write_text("X = 1\n")
    (pkg / "lib" / "lazy.py").write_text("Y = 2\n")
    (pkg / "lib" / "other.py").write_text("Z = 3\n")
    (pkg / "lib" / "top.py").write_text("W = 4\n")
    (pkg / "steps" / "stage.py").write_text(
        "from themesim.lib import top\n\n"
        "def _helper():\n    from themesim.lib import lazy\n    return lazy.Y\n\n"
        "def step():\n    from themesim.lib.used import deep\n    return _helper()\n\n"
        "def other_step():\n    from themesim.lib import other\n    return other.Z\n"
    )
    script = tmp_path / "script.py"
    script.write_text("from themesim.steps.stage import step\nstep()\n")
    assert script_modules(script, pkg) == [
        "themesim",
        "themesim.lib",
        "themesim.lib.deep",
        "themesim.lib.lazy",
        "themesim.lib.top",
        "themesim.lib.used",
        "themesim.steps",
        "themesim.steps.stage",
    ]
    both = tmp_path / "both.py"
    both.write_text("from themesim.steps.stage import other_step, step\n")
    assert "themesim.lib.other" in script_modules(both, pkg)


def test_code_deps_kept_between_runs_until_a_package_file_changes(tmp_path, monkeypatch):
    import themesim.deps as deps

    pkg = tmp_path / "themesim"
    (pkg / "lib").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "lib" / "__init__.py"):
        init.write_text("")
    (pkg / "lib" / "a.py").write_text("X = 1\n")
    (pkg / "lib" / "b.py").write_text("Y = 2\n")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "s.py").write_text("from themesim.lib.a import X\n")
    cache = tmp_path / "work" / ".snakemake" / "deps.json"

    first = deps.CodeDeps(scripts, pkg, cache).files("s.py")
    assert [Path(f).name for f in first] == ["__init__.py", "__init__.py", "a.py"]
    assert cache.is_file()

    # A second run reads the file: no parsing at all.
    def no_parsing(*args):
        raise AssertionError("parsed again")

    monkeypatch.setattr(deps, "script_code", no_parsing)
    assert deps.CodeDeps(scripts, pkg, cache).files("s.py") == first
    monkeypatch.undo()

    # An edit to a module (a new import) is seen at the next run (a new process: no parse
    # trees kept in memory).
    (pkg / "lib" / "a.py").write_text("from themesim.lib import b\nX = 1\n")
    deps._parsed.cache_clear()
    again = deps.CodeDeps(scripts, pkg, cache).files("s.py")
    assert again == first + [str(pkg / "lib" / "b.py")]


def test_code_digest_follows_names_and_contents_not_mtimes_or_location(tmp_path):
    import themesim.deps as deps

    def digest(root):
        deps._file_sha.cache_clear()
        files = [root / "pkg" / "a.py", root / "pkg" / "sub" / "b.py"]
        return code_digest(files, root / "pkg")

    for root in (tmp_path / "one", tmp_path / "two"):
        (root / "pkg" / "sub").mkdir(parents=True)
        (root / "pkg" / "a.py").write_text("X = 1\n")
        (root / "pkg" / "sub" / "b.py").write_text("Y = 2\n")
    first = digest(tmp_path / "one")
    assert digest(tmp_path / "two") == first  # another checkout of the same code
    os.utime(tmp_path / "one" / "pkg" / "a.py", (1, 1))
    assert digest(tmp_path / "one") == first
    (tmp_path / "one" / "pkg" / "a.py").write_text("X = 2\n")
    assert digest(tmp_path / "one") != first
    (tmp_path / "two" / "pkg" / "sub" / "b.py").rename(tmp_path / "two" / "pkg" / "b.py")
    files = [tmp_path / "two" / "pkg" / "a.py", tmp_path / "two" / "pkg" / "b.py"]
    assert code_digest(files, tmp_path / "two" / "pkg") != first  # a moved module


# ---------------------------------------------------------------- in the workflow

# Rules that draw figures (runs and grounding draw theirs beside their tables).
PLOT_RULES = {"heatmap", "runs", "grounding"}
# report_parts draws the headline intervals, methods side by side and each method's sweep,
# distributions and theme map beside the headline and workbook tables, so it reads the plot
# modules too. verdicts reads the grounding rule's pair tables, so it reruns after it.
REPORT_RULES = {"summary_report", "report_parts", "verdicts", "all"}
NOTHING = "Nothing to be done"


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    """A copy of the workflow (Snakefile, rules, scripts, src, profiles) whose files the test
    may edit, run once to the end on the tiny study with MiniLM and TF-IDF."""
    tmp = tmp_path_factory.mktemp("code_deps")
    repo = tmp / "repo"
    repo.mkdir()
    shutil.copy(REPO / "Snakefile", repo / "Snakefile")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("workflow", "scripts", "src", "profiles"):
        shutil.copytree(REPO / folder, repo / folder, ignore=ignore)
    study = write_data(tmp / "study")
    write_config(
        study,
        [0.5],
        metrics={"bootstrap": {"n": 10, "seed": 1}, "null_model": {"pool": 10, "seed": 2}},
        methods={
            "minilm": {"kind": "sentence_transformer", "thresholds": [0.5]},
            "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
        },
    )
    # The copied package is the one imported, by the workflow and by its jobs.
    env = snakemake_env(PYTHONPATH=str(repo / "src"))
    snakemake(study, "--cores", "2", snakefile=repo / "Snakefile", env=env)
    assert NOTHING in dry_run(repo, study, env)
    return repo, study, env


def dry_run(repo: Path, study: Path, env) -> str:
    return snakemake(study, "-n", "--cores", "2", snakefile=repo / "Snakefile", env=env).stdout


def after_change(repo: Path, study: Path, env, module: str, *, edit=True) -> str:
    """`snakemake -n` after `module` (under src/themesim) gets a newer mtime and, with `edit`,
    one more comment line; the file and its mtime are put back afterwards."""
    path = repo / "src" / "themesim" / module
    before, text = path.stat(), path.read_text()
    newest = max(p.stat().st_mtime for p in (study / "results").rglob("*") if p.is_file())
    if edit:
        path.write_text(text + "\n# an edit\n")
    os.utime(path, (newest + 60, newest + 60))
    try:
        return dry_run(repo, study, env)
    finally:
        path.write_text(text)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_copy_imports_its_own_package(workflow_copy):
    repo, _, env = workflow_copy
    out = subprocess.run(
        [sys.executable, "-c", "import themesim; print(themesim.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(out) == repo / "src" / "themesim" / "__init__.py"


def test_editing_a_plot_module_reruns_plots_and_report_only(workflow_copy):
    counts = job_counts(after_change(*workflow_copy, "report/plots/common.py"))
    assert set(counts) == PLOT_RULES | REPORT_RULES, counts
    assert counts["runs"] == 2  # one job per method
    assert counts["heatmap"] == 4  # one per method and reference pair
    assert counts["report_parts"] == 1 and counts["summary_report"] == 1


def test_editing_a_metric_module_reruns_metrics_plots_and_report(workflow_copy):
    counts = job_counts(after_change(*workflow_copy, "metrics/sets/coverage.py"))
    # metrics and grounding (its text-Hungarian pairs), and every rule that reads their
    # tables; run consistency and set quality do not use coverage.py, and nothing upstream of
    # the metrics reruns.
    downstream = PLOT_RULES - {"runs"} | REPORT_RULES
    assert set(counts) == {"metrics", "grounding"} | downstream, counts
    assert counts["metrics"] == 2 and counts["summary_report"] == 1
    assert counts["heatmap"] == 4
    assert not [r for r in counts if r.startswith(("embed", "similarity", "ingest"))]


def test_job_logs_list_the_data_a_job_reads_not_the_code(workflow_copy):
    """The code digest is a param: a job's `input:` line names its data files, and an edit
    reruns it for changed params."""
    out = after_change(*workflow_copy, "metrics/sets/coverage.py")
    inputs = [line for line in out.splitlines() if line.strip().startswith("input:")]
    assert inputs and not [line for line in inputs if "src/themesim" in line]
    assert "results/similarity/tfidf/manifest.csv" in "\n".join(inputs)
    assert "params" in out.lower()  # the reason Snakemake gives for the rerun


def test_a_touch_without_an_edit_reruns_nothing(workflow_copy):
    """Snakemake reruns for a newer input only when its checksum changed too."""
    assert NOTHING in after_change(*workflow_copy, "metrics/sets/coverage.py", edit=False)
