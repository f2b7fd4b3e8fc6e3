"""Imports: a module imports what it uses at its top; only the heavy packages are imported
inside a function, each in the one module the others call (docs/architecture.md, "Imports at
the top"). Job start-up: a workflow job is a fresh Python process, so a module-level import of
a heavy library is paid by every job that reaches the module, whether it calls it or not: a
job stays lean by module boundaries."""

import ast
import subprocess
import sys

from helpers import REPO

SRC = REPO / "src" / "themesim"
# The imports allowed inside a function: (module file, top-level package imported).
LAZY = {
    ("embed/device.py", "torch"),  # import_torch: OpenMP's wait policy set first
    ("embed/plain.py", "transformers"),
    ("embed/encode.py", "sentence_transformers"),
    ("io/xlsx.py", "openpyxl"),
    ("validate/figure.py", "matplotlib"),  # pyplot, after matplotlib.use("Agg")
    ("metrics/sets/transport.py", "ot"),  # POT, its PyTorch backend off first
    ("tfidf.py", "sklearn"),  # the kinds' registry reaches it from every process
    # The coder's training (themesim train-coder) alone:
    ("coder/train.py", "sentence_transformers"),
    ("coder/train.py", "transformers"),
    ("coder/train.py", "peft"),
}
HEAVY = ("torch", "transformers", "sentence_transformers", "openpyxl", "peft", "ot")


def _guarded(node: ast.Try) -> bool:
    """A try whose handler catches ImportError: an optional dependency's import."""
    names = []
    for h in node.handlers:
        types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        names += [x.id for x in types if isinstance(x, ast.Name)]
    return bool({"ImportError", "ModuleNotFoundError"} & set(names))


def imports_inside_functions(tree: ast.AST) -> list:
    """Every Import/ImportFrom under a function, but those in the body of a try that
    catches ImportError."""
    found = []

    def walk(nodes, in_function: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                if in_function:
                    found.append(node)
            elif isinstance(node, ast.Try) and _guarded(node):
                handlers = [stmt for h in node.handlers for stmt in h.body]
                walk(handlers + node.orelse + node.finalbody, in_function)
            else:
                function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                walk(ast.iter_child_nodes(node), in_function or function)

    walk([tree], False)
    return found


def test_imports_inside_functions_are_only_the_heavy_ones():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        for node in imports_inside_functions(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):  # a relative one ("." first) is never allowed
                names = ["." * node.level + (node.module or "")]
            else:
                names = [a.name for a in node.names]
            found += [
                f"{where}:{node.lineno} {name}"
                for name in names
                if (where, name.split(".")[0]) not in LAZY
            ]
    assert not found, "import these at the module's top:\n" + "\n".join(found)


def test_no_module_imports_a_heavy_package_as_it_loads():
    modules = sorted(
        "themesim." + ".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        for p in SRC.rglob("*.py")
        if p.name != "__main__.py"
    )
    assert len(modules) > 200
    code = "import importlib\n" + "\n".join(f"importlib.import_module({m!r})" for m in modules)
    loaded = loaded_after(code, list(HEAVY) + ["matplotlib.pyplot", "sklearn.feature_extraction"])
    assert not any(loaded.values()), loaded


def loaded_after(code: str, modules: list[str]) -> dict[str, bool]:
    """Which of `modules` are imported after running `code` in a fresh interpreter."""
    probe = f"import sys\n{code}\nprint(' '.join(str(m in sys.modules) for m in {modules!r}))"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
    ).stdout.split()
    return dict(zip(modules, [x == "True" for x in out], strict=True))


def test_the_heatmap_step_imports_neither_scipy_stats_nor_scikit_learn_nor_the_llm_client():
    """The 33 heatmap jobs of the demo use the Hungarian pairs (scipy.optimize) and the
    method's scale (metrics/sets/within.py), not the baselines' percentile, the calibration's
    fit, the kinds' registry or the study's names (steps/pair_heatmaps.py). scipy's graph
    matching (coverage.py) comes with them: 3 ms beside scipy.optimize."""
    loaded = loaded_after(
        "from themesim.steps.plots import comparison_heatmap\n"
        "import themesim.metrics.isotonic, themesim.metrics.sets.coverage\n"
        "import themesim.metrics.method_scale, themesim.report.plots.heatmap, themesim.similarity",
        ["scipy.optimize", "scipy.stats", "statsmodels", "sklearn", "httpx2", "themesim.kinds"],
    )
    assert loaded == {
        "scipy.optimize": True,
        "scipy.stats": False,
        "statsmodels": False,
        "sklearn": False,
        "httpx2": False,
        "themesim.kinds": False,
    }


def test_the_labels_and_embedding_steps_import_no_scipy_stats_or_scikit_learn():
    """segment_labels applies the trained coder's head with numpy (coder/head_fit.py fits
    it) and its thresholds' κ from metrics/kappa.py; the embedding job reaches TF-IDF through
    tfidf.py only (its keywords come from a child process)."""
    loaded = loaded_after(
        "import themesim.steps.segment_labels, themesim.steps.embed, themesim.steps.metrics",
        ["scipy.stats", "sklearn", "statsmodels", "docx"],
    )
    # the metrics job needs scipy.stats and statsmodels (intervals, nulls), never scikit-learn
    assert loaded == {"scipy.stats": True, "sklearn": False, "statsmodels": True, "docx": False}
    loaded = loaded_after(
        "import themesim.steps.segment_labels, themesim.steps.embed",
        ["scipy.stats", "sklearn", "statsmodels", "docx"],
    )
    assert not any(loaded.values()), loaded


def test_transport_imports_pot_without_torch():
    """POT's PyTorch backend stays off: a transport job never imports torch."""
    loaded = loaded_after(
        "import numpy as np\n"
        "from themesim.metrics.sets.transport import unbalanced_plan\n"
        "plan = unbalanced_plan(np.array([[0.9, 0.1], [0.2, 0.8]]))\n"
        "assert plan[0, 0] > plan[0, 1] and plan[1, 1] > plan[1, 0], plan",
        ["ot", "torch"],
    )
    assert loaded == {"ot": True, "torch": False}


def test_a_csv_study_starts_without_scipy_stats_scikit_learn_or_matplotlib(tmp_path):
    """Every `snakemake` start prepares the study: none of the heavy numerical libraries is
    imported then (the verdicts' generators are in study/groups.py, not beside their
    statistics)."""
    from helpers import make_study

    root = make_study(tmp_path / "study")
    loaded = loaded_after(
        "import os, yaml\n"
        f"os.chdir({str(root)!r})\n"
        "from themesim.config import prepare\n"
        "from themesim.defaults import SCHEMA_PATH\n"
        "from themesim.schema import check_schema\n"
        "import themesim.inputs.jobs, themesim.deps, themesim.provenance\n"
        "config = yaml.safe_load(open('config/config.yaml'))\n"
        "check_schema(config, SCHEMA_PATH, defaults=True)\n"
        "study = prepare(config)\n"
        "assert len(study.sets) >= 2",
        ["scipy.stats", "statsmodels", "sklearn", "matplotlib", "torch", "themesim.config"],
    )
    assert loaded == {
        "scipy.stats": False,
        "statsmodels": False,
        "sklearn": False,
        "matplotlib": False,
        "torch": False,
        "themesim.config": True,
    }


def test_the_command_line_imports_a_command_s_modules_only_when_it_runs():
    """`themesim --help` builds every subcommand's parser from cli.py's table; the handlers'
    modules (numpy, pandas, scipy, the metrics) are imported by the one command that runs."""
    loaded = loaded_after(
        "from themesim.cli import build_parser\nbuild_parser().format_help()",
        ["numpy", "pandas", "scipy", "themesim.metrics.comparison", "themesim.cli_agree"],
    )
    assert not any(loaded.values()), loaded


def test_themesim_agree_draws_no_figure():
    """`themesim agree --out x.xlsx` writes its tables with report/workbook.py, not with the
    report job's module (steps/report_parts.py), whose figures import matplotlib (0.4 s)."""
    loaded = loaded_after(
        "import themesim.cli_agree", ["matplotlib", "themesim.steps.report_parts", "openpyxl"]
    )
    assert loaded == {
        "matplotlib": False,
        "themesim.steps.report_parts": False,
        "openpyxl": False,
    }
