"""Job start-up: a workflow job is a fresh Python process, so a module-level import of a heavy
library is paid by every job that reaches the module, whether it calls it or not."""

import subprocess
import sys

from helpers import REPO


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


def test_the_plot_step_does_not_import_scipy_stats():
    """The heatmaps use the Hungarian pairs (scipy.optimize), not the baselines' percentile."""
    loaded = loaded_after(
        "from themesim.steps.plots import comparison_heatmap\n"
        "import themesim.metrics.isotonic, themesim.metrics.sets.coverage\n"
        "import themesim.metrics.method_scale, themesim.report.plots.heatmap, themesim.similarity",
        ["scipy.optimize", "scipy.stats", "scipy.sparse.csgraph", "sklearn"],
    )
    assert loaded == {
        "scipy.optimize": True,
        "scipy.stats": False,
        "scipy.sparse.csgraph": False,
        "sklearn": False,
    }


def test_transport_imports_pot_without_torch_sklearn_or_networkx_and_leaves_them_importable():
    loaded = loaded_after(
        "import numpy as np\n"
        "from themesim.metrics.sets.transport import unbalanced_plan\n"
        "plan = unbalanced_plan(np.array([[0.9, 0.1], [0.2, 0.8]]))\n"
        "assert plan[0, 0] > plan[0, 1] and plan[1, 1] > plan[1, 0], plan\n"
        "loaded_before = [m for m in ('sklearn', 'torch', 'networkx') if m in sys.modules]\n"
        "assert not loaded_before, loaded_before\n"
        "import sklearn.cluster, networkx",
        ["ot", "torch", "sklearn.cluster", "networkx"],
    )
    # POT loaded without the three; a later `import sklearn.cluster` or `import networkx`
    # elsewhere still works.
    assert loaded == {"ot": True, "torch": False, "sklearn.cluster": True, "networkx": True}


def test_a_csv_study_starts_without_the_qdpx_reader(tmp_path):
    """Every `snakemake` start prepares the study: a study of CSV theme sets never needs the
    REFI-QDA reader (XML, and the parquet reader through io.coded), about 0.08 s of each
    start."""
    from helpers import make_study

    root = make_study(tmp_path / "study")
    loaded = loaded_after(
        "import os, yaml\n"
        f"os.chdir({str(root)!r})\n"
        "from themesim.config import prepare\n"
        "from themesim.defaults import SCHEMA_PATH\n"
        "from themesim.schema import check_schema\n"
        "config = yaml.safe_load(open('config/config.yaml'))\n"
        "check_schema(config, SCHEMA_PATH, defaults=True)\n"
        "study = prepare(config)\n"
        "assert len(study.sets) >= 2",
        ["themesim.io.refi_qda", "themesim.io.coded", "themesim.config"],
    )
    assert loaded == {
        "themesim.io.refi_qda": False,
        "themesim.io.coded": False,
        "themesim.config": True,
    }
