"""The package's layers (docs/architecture.md): reading and writing files, the archive, the
models and the LLM client sit below the metrics and never import them, at module level or
inside a function."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "themesim"
BELOW_METRICS = ["io", "archive", "embed", "llm", "similarity.py", "memory.py", "paths.py"]


def imported(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return found


def test_no_lower_layer_imports_the_metrics():
    files = [p for name in BELOW_METRICS for p in sorted((SRC / name).glob("**/*.py"))]
    files += [SRC / name for name in BELOW_METRICS if name.endswith(".py")]
    assert len(files) > 40
    upward = [
        f"{p.relative_to(SRC)} imports {m}"
        for p in files
        for m in sorted(imported(p))
        if m == "themesim.metrics" or m.startswith("themesim.metrics.")
    ]
    assert not upward, upward
