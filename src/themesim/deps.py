"""Which package files a workflow script runs: a rule's exact code dependencies.

Snakemake cannot see an edit to an imported module, so every rule carries a digest of the
files of ``themesim`` its script uses as its ``code`` param: an edit reruns exactly the rules
whose scripts reach the file, and a job's log lists the data it reads, not ~50 module paths.
The files are derived here from the imports, never typed: the step function the script
imports, the module-level helpers it calls, and the full import closure of every other
``themesim`` module reached (imports inside functions count, as do the ``__init__.py`` files
of the packages on the way, and a string "themesim.module:function" that a registry names
for importlib, as report/figures.py does).
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from themesim.store import Kept, stamp

PACKAGE = "themesim"
# A function named for importlib.import_module: "themesim.report.plots.theme_map:draw_theme_map".
REFERENCE = re.compile(rf"({PACKAGE}(?:\.\w+)+):\w+")


def _module_file(src: Path, module: str) -> Path | None:
    """The file of a dotted module name under `src` (the package folder), or None."""
    parts = module.split(".")[1:]
    base = src.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_inits(src: Path, module: str) -> list[Path]:
    parts = module.split(".")[1:]
    return [
        src.joinpath(*parts[:k], "__init__.py")
        for k in range(len(parts))
        if src.joinpath(*parts[:k], "__init__.py").is_file()
    ]


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str | None:
    if not node.level:
        return node.module
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(nodes, src: Path, module: str, is_package: bool) -> set[str]:
    """Dotted ``themesim`` modules imported by the statements under `nodes`."""
    found = set()
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(node, module, is_package)
                if target is None:
                    continue
                # `from themesim.report import plots` imports a module, not a name.
                names = [target] + [
                    f"{target}.{a.name}"
                    for a in node.names
                    if _module_file(src, f"{target}.{a.name}") is not None
                ]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                named = REFERENCE.fullmatch(node.value)
                if not named:
                    continue
                names = [named.group(1)]
            else:
                continue
            found |= {n for n in names if n == PACKAGE or n.startswith(PACKAGE + ".")}
    return {n for n in found if _module_file(src, n) is not None}


@dataclass(frozen=True)
class _Parsed:
    """What the walk reads of one module, kept instead of its syntax tree: the trees of the
    package held ~300,000 objects to the end of every Snakemake process that walked them,
    whose teardown took about 1 s."""

    top: frozenset[str]  # modules its top-level import statements import
    anywhere: frozenset[str]  # modules it imports anywhere in its code
    defs: dict  # top-level function or class -> (top-level names it uses, modules it imports)


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@cache
def _parsed(src: Path, module: str) -> _Parsed:
    path = _module_file(src, module)
    tree = _parse(path)
    is_package = path.name == "__init__.py"
    defs = {
        n.name: n
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    uses = {
        name: (
            frozenset(n.id for n in ast.walk(d) if isinstance(n, ast.Name) and n.id in defs),
            frozenset(_imports([d], src, module, is_package)),
        )
        for name, d in defs.items()
    }
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    # anywhere: each statement walked once (the functions' imports are in `uses` already)
    walked = {id(d) for d in defs.values()}
    rest = [n for n in tree.body if id(n) not in walked]
    anywhere = _imports(rest, src, module, is_package).union(*(i for _, i in uses.values()))
    return _Parsed(frozenset(_imports(top, src, module, is_package)), frozenset(anywhere), uses)


def module_closure(src: Path, module: str, seen: set[str] | None = None) -> set[str]:
    """`module` and every ``themesim`` module it imports, anywhere in its code, recursively."""
    seen = set() if seen is None else seen
    if module in seen:
        return seen
    seen.add(module)
    for parent in _package_inits(src, module):
        rel = parent.relative_to(src).parent.parts
        module_closure(src, ".".join((PACKAGE, *rel)), seen)
    for dep in _parsed(src, module).anywhere:
        module_closure(src, dep, seen)
    return seen


def _function_imports(src: Path, module: str, names: set[str]) -> set[str]:
    """Modules used by the functions `names` of `module` (following module-level helpers),
    plus the module's top-level imports, which run whenever it is imported."""
    parsed = _parsed(src, module)
    todo, used = [n for n in names if n in parsed.defs], set()
    while todo:
        name = todo.pop()
        if name in used:
            continue
        used.add(name)
        todo.extend(n for n in parsed.defs[name][0] if n not in used)
    return set(parsed.top).union(*(parsed.defs[n][1] for n in used))


def script_modules(script, src) -> list[str]:
    """Dotted ``themesim`` modules a workflow script runs, sorted."""
    src = Path(src)
    tree = _parse(Path(script))
    seen: set[str] = set()
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        if not (node.module == PACKAGE or node.module.startswith(PACKAGE + ".")):
            continue
        if _module_file(src, node.module) is None:
            continue
        functions = {
            a.name for a in node.names if _module_file(src, f"{node.module}.{a.name}") is None
        }
        seen.add(node.module)
        for parent in _package_inits(src, node.module):
            rel = parent.relative_to(src).parent.parts
            module_closure(src, ".".join((PACKAGE, *rel)), seen)
        for dep in _function_imports(src, node.module, functions):
            module_closure(src, dep, seen)
        for a in node.names:
            if _module_file(src, f"{node.module}.{a.name}") is not None:
                module_closure(src, f"{node.module}.{a.name}", seen)
    return sorted(seen)


def script_code(script, src) -> list[str]:
    """The files of :func:`script_modules`, as paths under `src` (the package folder)."""
    src = Path(src)
    return [str(_module_file(src, m)) for m in script_modules(script, src)]


class CodeDeps:
    """:func:`script_code` per script, kept in a JSON file between Snakemake runs.

    Parsing the package for every rule's `code=` costs ~0.7 s of CPU at each start of
    Snakemake (each `-n`, each cluster job). The file holds one key: the path, size and mtime
    of every ``.py`` file of the package and the scripts folder; any change to one of them
    (an edit, a new module) recomputes everything. An unwritable location only skips saving.
    """

    def __init__(self, scripts, src, cache_file) -> None:
        self.scripts, self.src = Path(scripts), Path(src)
        self.kept = Kept(cache_file)
        self.key = _signature([self.src, self.scripts])
        self.known = dict(self.kept.get(self.key) or {})

    def files(self, script: str) -> list[str]:
        """The code files of `script` (a file name in the scripts folder)."""
        if script not in self.known:
            self.known[script] = script_code(self.scripts / script, self.src)
            self.kept.put(self.key, self.known)  # concurrent runs never read half a file
        return list(self.known[script])

    def digest(self, script: str) -> str:
        """sha256 of the code files of `script`: their names in the package and contents."""
        return code_digest(self.files(script), self.src)


def code_digest(files, src) -> str:
    """One sha256 over each file's path relative to `src` and its contents, in order: the
    same code gives the same digest wherever the package lies (a moved checkout reruns
    nothing), and a touch without an edit changes nothing."""
    h = hashlib.sha256()
    for f in files:
        h.update(Path(f).relative_to(src).as_posix().encode() + b"\0")
        h.update(_file_sha(f).encode() + b"\n")
    return h.hexdigest()


@cache
def _file_sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _signature(folders) -> str:
    return stamp([p for folder in folders for p in sorted(Path(folder).resolve().rglob("*.py"))])
