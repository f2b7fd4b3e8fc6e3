"""The house's size rule for the package's functions: at most 8 parameters (self and cls not
counted) and at most 80 lines from `def` to the end."""

import ast
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "themesim"
MAX_PARAMS, MAX_LINES = 8, 80


def sizes(path: Path):
    """(name, line, parameters, lines) of every function and method in a module."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
            params = len(names) - (names[:1] in (["self"], ["cls"]))
            yield node.name, node.lineno, params, node.end_lineno - node.lineno + 1


def test_sizes_counts_parameters_and_lines(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "class C:\n"
        "    def m(self, a, /, b, *args, c, **kw):\n"
        "        return a\n"
        "def g(x):\n"
        "    y = x\n"
        "\n"
        "    return y\n"
    )
    assert sorted(sizes(f)) == [("g", 4, 1, 4), ("m", 2, 3, 2)]  # *args, **kw not counted


def test_no_function_over_8_parameters_or_80_lines():
    over = [
        f"{path.relative_to(SRC.parent)}:{line} {name} ({params} parameters, {lines} lines)"
        for path in sorted(SRC.rglob("*.py"))
        for name, line, params, lines in sizes(path)
        if params > MAX_PARAMS or lines > MAX_LINES
    ]
    assert not over, "split the function or group its values into one object: " + "; ".join(over)
