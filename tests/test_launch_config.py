"""The block-size sweep's kernel (launch_config): every block size computes the right
answer in Numba's CUDA simulator through the harness, the CUDA C entry points exist for
every variant with launch bounds of their own block size (NVRTC, no GPU), CuPy and CUDA
Python launch them at that block size, and the occupancy helpers turn the frameworks'
occupancy API answers into a row's figure or a reason."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from test_cuda_sources import _cupy_and_cuda_python_launches, ptx_entries, ptx_of

from gpubench import occupancy
from gpubench.kernels.launch_config import (
    BLOCK_SIZES,
    POLY_STEPS,
    parse_variant,
    poly64,
    variant_name,
)
from gpubench.kernels.launch_config.with_cuda_python import driver_occupancy, entry_point
from gpubench.spec import get_kernel, implementations

ROOT = Path(__file__).resolve().parents[1]
SPEC = get_kernel("launch_config")

SIM_SCRIPT = r"""
import json, sys
import numpy as np
sys.setswitchinterval(5e-4)
import gpubench.backends.numba.gpu as gpu
from gpubench.backends import load_backend
from gpubench.harness import Settings, measure
from gpubench.spec import get_kernel, implementations

asked = []
real = gpu.grid_1d
def grid_1d(n, threads=None):  # poison and flush launch at the default (None)
    if threads is not None:
        asked.append(threads)
    return real(n, threads)
gpu.grid_1d = grid_1d
be = load_backend("numba-gpu"); be.start(1)
settings = Settings(warmup=0, min_samples=1, max_samples=1, max_time_s=0.0,
                    caller_clocks=False)
spec = get_kernel("launch_config")
(impl,) = implementations("launch_config", "numba", "gpu")
for case in spec.cases(sizes=[300, 5000]):
    del asked[:]
    host = spec.make_inputs(case, np.random.default_rng(case.seed(settings.seed)))
    m = measure(spec, impl, case, be, settings, host, spec.reference(case, host))
    print(json.dumps({"id": f"{case.variant}/{case.dtype}/{case.size}", "threads": asked,
                      **{k: m.fields.get(k) for k in ("status", "reason", "rel_err",
                                                       "occupancy_reason")}}))
"""


@pytest.fixture(scope="module")
def simulated() -> dict[str, dict]:
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed")
    env = {k: v for k, v in os.environ.items() if k != "GPUBENCH_PLUGINS"}
    env.update(NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", SIM_SCRIPT], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {r["id"]: r for r in rows}


@pytest.mark.parametrize("variant", SPEC.variants)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [300, 5000])
def test_each_block_size_is_right_in_the_simulator(simulated: dict[str, dict], variant: str,
                                                  dtype: str, size: int) -> None:
    """Through harness.measure, launched at the variant's block size; the simulator has
    no occupancy calculator, and the row says so instead of a figure."""
    r = simulated[f"{variant}/{dtype}/{size}"]
    assert r["status"] == "ok", r
    assert r["threads"] == [parse_variant(variant)[1]]
    assert "simulator" in r["occupancy_reason"]


def test_variants_name_each_work_at_each_block_size() -> None:
    assert SPEC.variants == tuple(variant_name(w, b) for w in ("add", "poly")
                                  for b in BLOCK_SIZES)
    assert parse_variant("poly_512") == ("poly", 512)
    for bad in ("add_96", "mul_256", "add", "add_x"):
        with pytest.raises(ValueError):
            parse_variant(bad)
    frameworks = {i.framework: i.name for i in implementations(SPEC.name, device="gpu")}
    assert frameworks == {"numba": "cuda_jit", "cupy": "raw_kernel", "cuda_python": "nvrtc"}
    assert not implementations(SPEC.name, device="cpu")


def test_poly_reference_is_the_chain_and_float32_stays_in_tolerance() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0.5, 1.5, 1000), rng.uniform(0.5, 1.5, 1000)
    y = a.copy()
    for _ in range(POLY_STEPS):
        y = y * a + b
    np.testing.assert_allclose(poly64(a, b), y, rtol=1e-15)
    # the chain in float32, rounded at every step: within the kernel's float32 tolerance
    case = SPEC.cases(sizes=[1000], dtypes=["float32"], variants=["poly_256"])[0]
    y32 = poly64(a.astype(np.float32), b.astype(np.float32))
    assert SPEC.check(case, y32, SPEC.reference(case, {"a": a, "b": b})).passed


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_entry_point_has_launch_bounds_of_its_block_size(dtype: str) -> None:
    entries = ptx_entries(ptx_of(SPEC.name))
    for variant in SPEC.variants:
        name = entry_point(variant, dtype)
        assert entries[name]["maxntid"] == parse_variant(variant)[1], name


def test_cupy_and_cuda_python_launch_each_variant_at_its_block_size(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cupy_launches, cp_launches = _cupy_and_cuda_python_launches(SPEC.name, monkeypatch)
    for launches in (cupy_launches, cp_launches):
        assert {launch[1].variant for launch in launches} == set(SPEC.variants)
        for _impl, case, _src, name, _grid, block, _args, _shmem in launches:
            threads = parse_variant(case.variant)[1]
            assert (block if isinstance(block, tuple) else (block,)) == (threads,)
            assert name == entry_point(case.variant, case.dtype)


def test_theoretical_occupancy() -> None:
    assert occupancy.theoretical(8, 256, 2048) == 1.0
    assert occupancy.theoretical(1, 1024, 2048) == 0.5
    assert occupancy.theoretical(3, 512, 1536) == 1.0
    with pytest.raises(ValueError, match="cannot launch"):
        occupancy.theoretical(0, 1024, 2048)


def test_occupancy_fields_give_a_figure_or_a_reason() -> None:
    ctx = SimpleNamespace(occupancy=None)
    assert occupancy.fields(ctx) == {}
    occupancy.attach(ctx, lambda: 0.75)
    assert occupancy.fields(ctx) == {"occupancy": 0.75, "occupancy_reason": ""}

    def no_api() -> float:
        raise NotImplementedError("no calculator here")

    occupancy.attach(ctx, no_api)
    got = occupancy.fields(ctx)
    assert math.isnan(got["occupancy"])
    assert got["occupancy_reason"] == "not measured: NotImplementedError: no calculator here"
    occupancy.attach(ctx, lambda: 1.5)
    assert "gave 1.5" in occupancy.fields(ctx)["occupancy_reason"]


def test_cuda_python_occupancy_asks_the_kernels_occupancy_api() -> None:
    asked = []

    def blocks(threads: int, shmem: int) -> int:
        asked.append((threads, shmem))
        return 1 if threads == 1024 else 2048 // threads

    kernel = SimpleNamespace(occupancy=SimpleNamespace(max_active_blocks_per_multiprocessor=blocks))
    be = SimpleNamespace(max_threads_per_sm=2048)
    assert driver_occupancy(be, kernel, 1024) == 0.5
    assert driver_occupancy(be, kernel, 128) == 1.0
    assert asked == [(1024, 0), (128, 0)]
    with pytest.raises(RuntimeError, match=r"no Kernel\.occupancy"):
        driver_occupancy(be, SimpleNamespace(), 256)


def test_cupy_occupancy_asks_cupys_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpubench.kernels.launch_config.with_cupy_raw import cupy_occupancy

    fake = SimpleNamespace(cuda=SimpleNamespace(
        driver=SimpleNamespace(occupancyMaxActiveBlocksPerMultiprocessor=(
            lambda ptr, threads, shmem: 3 if ptr == 7 else 0)),
        Device=lambda: SimpleNamespace(attributes={"MaxThreadsPerMultiProcessor": 1536})))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    fn = SimpleNamespace(kernel=SimpleNamespace(ptr=7))
    assert cupy_occupancy(fn, 256) == 0.5


def test_the_device_overlay_plans_the_sweep_alone() -> None:
    """tools/device/block-sizes.yaml over the full suite: the three GPU frameworks'
    sweep rows at 2**20, 2**24 and 2**26 elements, every other kernel off."""
    from gpubench.config import validate_config
    from gpubench.runner import plan
    from gpubench.spec import kernel_names
    from gpubench.suites import load_yaml, suite_config

    over = load_yaml(ROOT / "tools" / "device" / "block-sizes.yaml")
    cfg = suite_config("full", over)
    validate_config(cfg)
    assert cfg["environments"]["mode"] == "system"
    enabled = [k for k in kernel_names() if cfg["kernels"].get(k, {}).get("enabled", True)
               and k in cfg["kernels"]]
    assert enabled == [SPEC.name]
    rows = {b: plan(b, cfg, 16) for b in cfg["backends"]}
    assert sorted(rows) == ["cuda_python-gpu", "cupy-gpu", "numba-gpu"]
    for backend, items in rows.items():
        assert {(i.kernel, i.mode) for i in items} == {(SPEC.name, "hot")}, backend
        assert {i.size for i in items} == {1 << 20, 1 << 24, 1 << 26}
        assert {i.variant for i in items} == set(SPEC.variants)
        assert {i.dtype for i in items} == {"float32"}
        assert len(items) == len(SPEC.variants) * 3


def test_numba_occupancy_asks_the_compiled_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Numba's query gives resident blocks over the whole device: per SM it is that over
    the SM count, for the overload the row's arguments compiled."""
    import gpubench.backends.numba.gpu as gpu
    from gpubench.kernels.launch_config.with_numba_cuda import numba_occupancy

    monkeypatch.setattr(gpu, "is_simulator", lambda: False)
    monkeypatch.setattr(gpu, "device_limits", lambda: (132, 2048))
    kernel = SimpleNamespace(max_cooperative_grid_blocks=lambda threads: 132 * (
        1 if threads == 1024 else 2048 // threads))
    other = SimpleNamespace(max_cooperative_grid_blocks=lambda threads: 0)
    dispatcher = SimpleNamespace(typeof_pyval=lambda x: type(x).__name__,
                                 overloads={("float", "int"): kernel, ("int",): other})
    assert numba_occupancy(dispatcher, (1.0, 2), 1024) == 0.5
    assert numba_occupancy(dispatcher, (1.0, 2), 64) == 1.0
    with pytest.raises(ValueError, match="cannot launch"):
        numba_occupancy(dispatcher, (2,), 256)
