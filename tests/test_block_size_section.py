"""The Block size section: the fastest threads per block per GPU case and size by one
rule (lowest median; the default loses surely only with interquartile ranges apart,
otherwise too close to call), the default's loss, the occupancy per block size, and the
verdict on the book's advice to choose the block size; its claims-table row."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from report_data import row

from gpubench.report import base, claims
from gpubench.report.sections import block_size
from gpubench.spec import get_kernel

SPEC = get_kernel("launch_config")
WORK = "add"


def _frame(times: dict[int, float], spread: float = 0.01, framework: str = "cupy",
           impl: str = "raw_kernel", size: int = 1 << 24, work: str = WORK,
           occupancy: dict[int, float] | None = None, reason: str = "") -> pd.DataFrame:
    rows = []
    for threads, t in times.items():
        r = row(framework, "gpu", impl, SPEC.name, size, "float32", t, threads=1,
                variant=f"{work}_{threads}", spread=spread, seed=threads)[0]
        occ = (occupancy or {}).get(threads, math.nan)
        r.update(occupancy=occ, occupancy_reason="" if math.isfinite(occ) else reason)
        rows.append(r)
    return base.prepare(pd.DataFrame(rows))


def test_the_sweep_is_declared_by_the_spec() -> None:
    """Every variant is one computation at one block size, the five block sizes of each
    computation, and every framework with a hand-written row has a default among them."""
    assert set(SPEC.block_sweep) == set(SPEC.variants)
    by_work: dict[str, set[int]] = {}
    for work, threads in SPEC.block_sweep.values():
        by_work.setdefault(work, set()).add(threads)
    assert by_work == {w: {64, 128, 256, 512, 1024} for w in ("add", "poly")}
    assert set(SPEC.default_blocks.values()) <= {64, 128, 256, 512, 1024}


def test_a_surely_faster_block_size_is_named_with_the_defaults_loss() -> None:
    df = _frame({64: 2.0e-3, 128: 1.5e-3, 256: 1.2e-3, 512: 1.0e-3, 1024: 1.1e-3},
                occupancy={b: 1.0 for b in (64, 128, 256, 512)} | {1024: 0.5})
    (r,) = block_size.sweep_results(df)
    assert (r.best, r.default, r.call) == (512, SPEC.default_blocks["cupy"], block_size.SURELY)
    assert r.loss == pytest.approx(0.2, rel=0.05)
    s = block_size.build(df)
    assert s.verdict == "holds"
    assert "512 threads, the default 256" in s.evidence
    cells = s.table.iloc[0]
    assert cells["fastest"] == "512" and cells["default"] == "256"
    assert cells["the default loses"].endswith(", surely")
    assert cells["1024 threads"].endswith("· 50%") and cells["512 threads"].endswith("· 100%")
    assert any("Fastest block size" in line and "512*" in line for line in s.sentences)


def test_overlapping_quartiles_are_too_close_to_call() -> None:
    df = _frame({128: 1.05e-3, 256: 1.00e-3, 512: 0.99e-3}, spread=0.2)
    (r,) = block_size.sweep_results(df)
    assert (r.best, r.call) == (512, block_size.CLOSE)
    s = block_size.build(df)
    assert s.table.iloc[0]["the default loses"].endswith(", too close to call")
    assert s.verdict == "does not hold here"


def test_the_default_fastest_loses_nothing() -> None:
    df = _frame({64: 1.6e-3, 256: 1.0e-3, 1024: 1.3e-3}, framework="numba", impl="cuda_jit")
    (r,) = block_size.sweep_results(df)
    assert (r.best, r.loss, r.call) == (256, 0.0, block_size.DEFAULT_FASTEST)
    s = block_size.build(df)
    assert s.table.iloc[0]["the default loses"] == block_size.DEFAULT_FASTEST
    assert s.verdict == "does not hold here"


def test_without_the_default_or_a_second_block_size_nothing_is_judged() -> None:
    s = block_size.build(_frame({64: 2e-3, 512: 1e-3}))
    assert s.table.iloc[0]["the default loses"] == block_size.NO_DEFAULT
    assert s.verdict == "not judged"
    assert block_size.build(_frame({256: 1e-3})).table is None


def test_missing_occupancy_is_said_with_its_reason() -> None:
    why = "not measured: the simulator has none"
    s = block_size.build(_frame({128: 1.2e-3, 256: 1e-3}, reason=why))
    assert "Occupancy not measured in 2 row(s): the simulator has none." in s.sentences
    assert "·" not in s.table.iloc[0]["256 threads"]


def test_other_kernels_make_no_section_and_no_claim_row() -> None:
    df = base.prepare(pd.DataFrame([row("cupy", "gpu", "raw_kernel", "vector_add", 1 << 20,
                                        "float32", 1e-3)[0]]))
    assert block_size.build(df).table is None
    assert "block_size" not in claims.claim_pairs(df)


def test_the_claims_table_carries_the_verdict() -> None:
    df = _frame({128: 1.5e-3, 256: 1.2e-3, 512: 1.0e-3})
    statement, evidence, verdict = claims.claim_pairs(df)["block_size"]
    assert statement.startswith(block_size.STATEMENT) and verdict == "holds"
    assert evidence == block_size.build(df).evidence


def test_a_file_before_the_occupancy_columns_reads_as_current(tmp_path) -> None:
    """Schema 7 lacks only the occupancy columns: its rows read as current, with no note;
    a version before it still gets the note about older rows."""
    from gpubench import occupancy, results
    from gpubench.report import read_timings_lenient

    rows = [row("cupy", "gpu", "raw_kernel", "vector_add", n, "float32", 1e-3)[0]
            for n in (1 << 10, 1 << 20)]
    for version, noted in ((7, False), (6, True)):
        old = pd.DataFrame(rows).drop(columns=list(occupancy.COLUMNS)).assign(
            schema_version=version)
        path = tmp_path / f"v{version}.csv"
        results.atomic_write_csv(path, old)
        df, notes = read_timings_lenient(path)
        assert (df["schema_version"] == results.SCHEMA_VERSION).all()
        assert df["occupancy"].isna().all()
        assert not any("occupancy" in n for n in notes)
        assert any("older gpubench" in n for n in notes) == noted, notes


def test_the_page_and_summary_show_the_section(tmp_path) -> None:
    """Listed in the outline: the page and summary.md render it, the table of contents
    links it; its verdict stands in the claims table."""
    import json

    from report_data import ENV

    from gpubench import results
    from gpubench.report import figures, load_inputs, render_html, render_markdown

    times = {64: 2.0e-3, 128: 1.5e-3, 256: 1.2e-3, 512: 1.0e-3, 1024: 1.1e-3}
    rows = [row("cupy", "gpu", "raw_kernel", SPEC.name, 1 << 24, "float32", t,
                variant=f"{WORK}_{b}", seed=b)[0] | {"occupancy": 1.0} for b, t in times.items()]
    rows.append(row("numpy", "cpu", "ufunc", "vector_add", 1 << 20, "float32", 1e-3)[0])
    results.atomic_write_csv(tmp_path / "timings.csv", pd.DataFrame(rows))
    (tmp_path / "host.json").write_text(json.dumps(ENV))
    inputs = load_inputs(tmp_path / "timings.csv", tmp_path / "host.json")
    md = render_markdown(inputs)
    assert "## Block size" in md and "**holds**" in md
    assert "| 1.21 ms · 100% |" in md and "| 512 | 256 | 21.5%, surely |" in md
    assert md.count(block_size.STATEMENT) == 2  # the section and the claims table
    html = render_html(inputs, figures.FigureQueue())
    assert 'id="block-size"' in html and 'href="#block-size"' in html
    assert block_size.STATEMENT in html
