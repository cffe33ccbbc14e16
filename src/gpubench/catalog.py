"""What is compared, from the kernel registry: each kernel with its variants, what its
size means, its workload class and unit, and every registered implementation per
framework and device (``gpubench catalog --markdown``).

The README's and ``docs/kernels.md``'s tables are this module's output, pasted between
``<!-- catalog:begin -->`` and ``<!-- catalog:end -->``; a test fails when they differ.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable

from gpubench import spec
from gpubench.backends import BACKENDS, split_backend_id
from gpubench.workloads import class_title

#: the markers around a pasted catalogue in a Markdown file
BEGIN, END = "<!-- catalog:begin -->", "<!-- catalog:end -->"
DEVICES = ("cpu", "gpu")


def framework_order() -> list[str]:
    """Frameworks in the order of the backends' registration (CPU first), then any
    other framework that registered implementations, alphabetically."""
    order: list[str] = []
    for backend_id in BACKENDS:
        framework, _ = split_backend_id(backend_id)
        if framework not in order:
            order.append(framework)
    return order


def _cap(size: int) -> str:
    """A size cap as a reader takes it in: 2^22 for a power of two, else the number."""
    if size > 1024 and size & (size - 1) == 0:
        return f"2^{size.bit_length() - 1}"
    return f"{size:,}"


def implementations_text(kernel: str, device: str) -> str:
    """``numpy `ufunc`; numba `njit_loop`, `njit_prange` (≤ 256)`` for one device."""
    impls = spec.implementations(kernel, device=device)
    order = framework_order()
    frameworks = sorted({i.framework for i in impls},
                        key=lambda f: (order.index(f) if f in order else len(order), f))
    parts = []
    for framework in frameworks:
        names: dict[str, str] = {}  # one entry per name, in registration order
        for i in impls:
            if i.framework == framework and i.name not in names:
                names[i.name] = f"`{i.name}`" + (f" (≤ {_cap(i.max_size)})" if i.max_size
                                                 else "")
        parts.append(f"{framework} {', '.join(names.values())}")
    return "; ".join(parts) if parts else "—"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rows() -> Iterable[list[str]]:
    for s in spec.kernel_specs():
        variants = ", ".join(f"`{v}`" for v in s.variants) if s.variants != ("default",) \
            else "—"
        yield [f"`{s.name}`", s.description, variants, s.size_meaning,
               class_title(s.report_class) if s.report_class else "—", s.unit,
               implementations_text(s.name, "cpu"),
               implementations_text(s.name, "gpu")]


def markdown() -> str:
    """The catalogue as one Markdown table, a line per kernel."""
    head = ["kernel", "what it computes", "variants", "size means", "class", "unit",
            "CPU implementations", "GPU implementations"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows()]
    return "\n".join(lines) + "\n"


def pasted(text: str) -> str | None:
    """The catalogue pasted in a Markdown text between the markers, or None."""
    m = re.search(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), text, re.S)
    return m.group(1) if m else None


def paste(text: str, table: str) -> str:
    """``text`` with the catalogue between its markers replaced by ``table``."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + table + text[end:]


def main(argv: list[str]) -> int:
    """``gpubench catalog``: print the table, or paste it into files."""
    from gpubench.cli_parsers import catalog_parser

    return run(catalog_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Print or paste the table that the parsed ``args`` ask for."""
    table = markdown()
    for name in args.paste:
        from pathlib import Path

        path = Path(name)
        path.write_text(paste(path.read_text(encoding="utf-8"), table), encoding="utf-8")
    if not args.paste:
        print(table, end="")
    return 0
