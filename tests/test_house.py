"""The test suite's own layout: shared set-ups live in helpers.py and conftest.py."""

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def test_no_test_file_imports_another():
    found = []
    for path in sorted(TESTS.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("test_"):
                found.append(f"{path.name}:{node.lineno} from {node.module}")
            elif isinstance(node, ast.Import):
                found += [
                    f"{path.name}:{node.lineno} import {a.name}"
                    for a in node.names
                    if a.name.startswith("test_")
                ]
    assert not found, "move the shared code into tests/helpers.py: " + "; ".join(found)
