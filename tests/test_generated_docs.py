"""The tables the documentation shows that code can generate are that code's output.

- What is compared (README.md and docs/kernels.md, between the catalog markers): the
  kernel registry, ``gpubench catalog --markdown`` (``--paste README.md docs/kernels.md``
  writes it again);
- the results' columns (docs/measurement.md): the results schema, ``gpubench schema``.

(The reliability table of docs/results.md is ``tests/test_reliability.py``'s catalogue,
checked there.) Each test fails naming the command that writes the table again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpubench import catalog, results

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE_FILES = ("README.md", "docs/kernels.md")


@pytest.fixture(scope="module")
def registry_catalogue() -> str:
    """The catalogue of this tree's registry, in a process of its own: no plugin a test
    loaded here (or GPUBENCH_PLUGINS) adds its stand-in kernels to it."""
    env = {k: v for k, v in os.environ.items() if k != "GPUBENCH_PLUGINS"}
    env["PYTHONPATH"] = str(ROOT / "src")
    out = subprocess.run([sys.executable, "-m", "gpubench", "catalog", "--markdown"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("name", CATALOGUE_FILES)
def test_the_catalogue_is_the_registrys(name: str, registry_catalogue: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    assert catalog.pasted(text) == registry_catalogue, (
        f"{name}: the table between {catalog.BEGIN} and {catalog.END} is not the registry's; "
        "run `gpubench catalog --markdown --paste README.md docs/kernels.md`")


def test_the_catalogue_names_every_kernel_and_framework(registry_catalogue: str) -> None:
    from gpubench import spec

    for name in spec.kernel_names():
        assert f"| `{name}` |" in registry_catalogue
    for framework in ("numpy", "python", "numba", "jax", "torch", "cupy", "cuda_python"):
        assert f"{framework} `" in registry_catalogue


def test_a_changed_catalogue_is_caught_and_pasted_back(tmp_path: Path) -> None:
    table = catalog.markdown()
    page = f"# x\n\n{catalog.BEGIN}\n{table}{catalog.END}\n"
    assert catalog.pasted(page) == table
    stale = page.replace("`vector_add`", "`vector_sum`", 1)
    assert catalog.pasted(stale) != table
    (tmp_path / "p.md").write_text(stale)
    assert catalog.main(["--markdown", "--paste", str(tmp_path / "p.md")]) == 0
    assert catalog.pasted((tmp_path / "p.md").read_text()) == table


def test_the_columns_table_is_the_results_schema() -> None:
    text = (ROOT / "docs" / "measurement.md").read_text(encoding="utf-8")
    assert results.schema_markdown() in text, (
        "docs/measurement.md's table of columns is not the results schema's: paste "
        "`gpubench schema` over it")
