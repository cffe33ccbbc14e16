"""No import cycles among gpubench's modules: the graph of imports, read from
the sources with ``ast``, has no cycle. An edge goes to the module named, not to the
packages above it (importing those never runs the importer again).

Two graphs: the imports run when a module loads (no cycle at all), and every import,
those deferred into functions included (no cycle either, save a package deferring the
import of its own submodule: ``gpubench.slurm.install`` imports the executor, which
needs Snakemake's SLURM plugin, only when asked to install it). A deferred import that
only hides a circle (report/figures.py and report/plots.py did) fails the second."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

SRC = ROOT / "src"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Import statements run when the module loads: at top level, or inside top-level
    ``if``/``try``/``with`` blocks (not in functions or classes' methods)."""
    out: list[ast.Import | ast.ImportFrom] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        elif isinstance(node, ast.If | ast.Try | ast.With | ast.ClassDef):
            for field in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, field, []):
                    if isinstance(child, ast.ExceptHandler):
                        todo.extend(child.body)
                    else:
                        todo.append(child)
    return out


def all_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, those inside functions included."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]


def import_graph(deferred: bool = False) -> dict[str, set[str]]:
    """Module -> the gpubench modules it imports (``deferred``: in functions too)."""
    read = all_imports if deferred else top_level_imports
    files = {module_name(p): p for p in SRC.joinpath("gpubench").rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        loading = {id(n) for n in top_level_imports(tree)}
        for node in read(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")
                    up = up[:len(up) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                # "from pkg import sub" imports the submodule sub
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base
                           for a in node.names]
            if id(node) not in loading and path.name == "__init__.py":
                # a package deferring the import of its own submodule
                targets = [t for t in targets if not t.startswith(f"{mod}.")]
            graph[mod] |= {t for t in targets if t in files and t != mod}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read() -> None:
    graph = import_graph()
    assert "gpubench.report.plots" in graph["gpubench.report.figures"]
    assert "gpubench.spec" in graph["gpubench.kernels.vector_add"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_among_gpubench_modules() -> None:
    assert cycles(import_graph()) == []


def test_no_import_cycles_through_deferred_imports() -> None:
    graph = import_graph(deferred=True)
    assert "gpubench.spec" in graph["gpubench.backends.base"]  # imported in a method
    assert cycles(graph) == []


#: the modules a framework is imported as (its own, and the few it brings along)
FRAMEWORK_MODULES = frozenset({"cupy", "cupyx", "torch", "jax", "numba", "cuda", "triton"})


def framework_imports(root: Path) -> list[str]:
    """``module: imported`` for every import of a framework (in functions too) by a module
    under ``root`` outside ``backends/`` and ``kernels/``: only a framework's own package
    and its kernels' implementations import it."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if "/backends/" in f"/{rel}" or "/kernels/" in f"/{rel}":
            continue
        for node in all_imports(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if not node.level else [])
            out += [f"{rel}: {n}" for n in names if n.split(".")[0] in FRAMEWORK_MODULES]
    return out


def test_only_the_backends_and_kernels_import_a_framework() -> None:
    assert framework_imports(SRC / "gpubench") == []


def test_the_framework_import_check_bites(tmp_path: Path) -> None:
    (tmp_path / "backends").mkdir()
    (tmp_path / "backends" / "ok.py").write_text("import torch\n")
    (tmp_path / "m.py").write_text("def f():\n    from cuda.bindings import driver\n"
                                   "import numpy\nimport torchvision\n")
    assert framework_imports(tmp_path) == ["m.py: cuda.bindings"]
