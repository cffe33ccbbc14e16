"""Code size: lines of each implementation's builder and the helpers it calls, read from
this checkout's source (the "code verbosity" of the comparison matrix in the workshop book,
§8.1, and the comparison guide, measured).
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from dataclasses import dataclass
from typing import Any

import pandas as pd

from gpubench.report.base import (
    _ordered,
)
from gpubench.report.render import text_table
from gpubench.spec import kernel_names

# -- code size ----------------------------------------------------------------------------


_CU_CALL = re.compile(r"cuda_sources\.source\(\s*[\"']([A-Za-z0-9_]+)[\"']")


def _code_lines(text: str) -> int:
    """Lines that are code: not blank, not only a comment, not a docstring."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return sum(1 for ln in text.splitlines() if ln.strip() and not
                   ln.strip().startswith("#"))
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                getattr(body[0], "value", None), ast.Constant) and isinstance(
                body[0].value.value, str):
            doc_lines.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    return sum(1 for i, ln in enumerate(text.splitlines(), 1)
               if ln.strip() and not ln.strip().startswith("#") and i not in doc_lines)


def _cu_lines(text: str) -> int:
    return sum(1 for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("//"))


def implementation_source(impl: Any) -> tuple[str, list[str]]:
    """The builder's source plus the module-level helpers it uses (transitively), and the
    CUDA C files it loads. Shared imports are not counted."""
    module = sys.modules.get(impl.builder.__module__)
    if module is None:
        return inspect.getsource(impl.builder), []
    msource = inspect.getsource(module)
    tree = ast.parse(msource)
    defs = {n.name: n for n in tree.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    lines = msource.splitlines()
    todo, seen = [impl.builder.__name__], set()
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        for node in ast.walk(defs[name]):
            if isinstance(node, ast.Name) and node.id in defs and node.id not in seen:
                if not _is_registered(defs[node.id]):
                    todo.append(node.id)
    chunks = []
    for name in sorted(seen, key=lambda n: defs[n].lineno):
        node = defs[name]
        start = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])
        chunks.append("\n".join(lines[start - 1:node.end_lineno]))
    text = "\n\n".join(chunks)
    return text, sorted(set(_CU_CALL.findall(text)))


def _is_registered(node: ast.AST) -> bool:
    for d in getattr(node, "decorator_list", []):
        f = d.func if isinstance(d, ast.Call) else d
        if isinstance(f, ast.Name) and f.id == "implementation":
            return True
    return False


def code_size(df: pd.DataFrame) -> pd.DataFrame:
    """Lines of code of every implementation that has rows, from the registry."""
    from gpubench import cuda_sources, spec

    present = df[["kernel", "framework", "implementation"]].drop_duplicates()
    out = []
    for kernel in _ordered(present["kernel"], kernel_names()):
        try:
            impls = spec.implementations(kernel)
        except Exception:  # noqa: BLE001 - unknown kernel: no source to measure
            continue
        want = present[present["kernel"] == kernel]
        pairs = set(zip(want["framework"], want["implementation"], strict=True))
        for impl in impls:
            if (impl.framework, impl.name) not in pairs:
                continue
            try:
                text, cus = implementation_source(impl)
            except (OSError, TypeError, SyntaxError):
                continue
            cu = 0
            for name in cus:
                try:
                    cu += _cu_lines(cuda_sources.source(name))
                except OSError:
                    pass
            out.append({"kernel": kernel, "framework": impl.framework,
                        "implementation": impl.name, "python": _code_lines(text),
                        "cuda_c": cu, "module": impl.builder.__module__.rsplit(".", 1)[-1]})
    frame = pd.DataFrame(out, columns=["kernel", "framework", "implementation", "python",
                                       "cuda_c", "module"])
    return frame.drop_duplicates(["kernel", "framework", "implementation"])


def code_size_tables(df: pd.DataFrame, sizes: pd.DataFrame | None = None
                     ) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """Per framework and per implementation; ``sizes``: :func:`code_size` of the frame
    (measured here when not given)."""
    sizes = code_size(df) if sizes is None else sizes
    if sizes.empty:
        return None, None
    total = sizes["python"] + sizes["cuda_c"]
    per_fw = []
    for fw, g in sizes.assign(total=total).groupby("framework", sort=True):
        per_fw.append([fw, str(len(g)), f"{g['total'].median():.0f}", str(int(g["total"].min())),
                       str(int(g["total"].max())), str(int((g["cuda_c"] > 0).sum()))])
    fw_table = text_table(["framework", "implementations", "lines (median)", "fewest", "most",
                      "with CUDA C"], per_fw,
                     frozenset({"implementations", "lines (median)", "fewest", "most",
                                "with CUDA C"}))
    rows = [[r["kernel"], r["framework"], r["implementation"], str(r["python"]),
             str(r["cuda_c"]) if r["cuda_c"] else "—", r["module"]]
            for _, r in sizes.iterrows()]
    impl_table = text_table(["kernel", "framework", "implementation", "Python lines",
                        "CUDA C lines", "file"], rows, frozenset({"Python lines",
                                                                  "CUDA C lines"}))
    return fw_table, impl_table


@dataclass
class CodeSize:
    """The code-size section: lines per implementation (``sizes``, numbers, which the
    matrix reads too), per framework and per implementation (tables)."""

    sizes: pd.DataFrame
    per_framework: pd.DataFrame | None
    per_implementation: pd.DataFrame | None


def build(df: pd.DataFrame) -> CodeSize:
    sizes = code_size(df)
    return CodeSize(sizes, *code_size_tables(df, sizes))
