"""Each framework's own custom-kernel route, run on the CPU through the real harness.

The rows are registered for GPUs only, but their code runs here:

- Triton (``triton.jit``, PyTorch's ``triton`` rows) under Triton's interpreter
  (``TRITON_INTERPRET=1``) on CPU torch tensors; skipped where ``triton`` is not
  installed (it is in ``requirements-dev.txt``; PyPI has wheels for Linux x86-64 only);
- Pallas (``pallas_call``, JAX's ``pallas`` rows) with ``interpret=True``, which the
  builders choose on a non-GPU backend;
- ``torch.compile`` for reduction and moving_average (CPU Inductor, a few cases: each
  compiles C++ for seconds);
- Numba CUDA's sliding-window moving_average in the CUDA simulator, on shapes beyond
  tests/test_numba_cuda.py's (the CUDA C sliding window: tests/test_moving_average_host.py).

:func:`gpubench.harness.measure` does not look at an implementation's devices, so each
case goes through the same first-call and after-timed-calls checks against the
kernel's reference and tolerance as a GPU row. A missing package gives an
``unavailable`` row with the import error, never an exception.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpubench.harness import Settings, measure
from gpubench.spec import BuildContext, Case, get_kernel, implementations

KERNELS = ("vector_add", "elementwise", "reduction", "moving_average", "matmul")
#: odd tails, several blocks, a partial grid-stride wave (reduction: > 16 blocks of 4096
#: under the interpreter's 4 "SMs" x 4 programs), matmul tiles cut by n
SIZES: dict[str, list[int]] = {"vector_add": [1000, 9000], "elementwise": [1000, 9000],
                               "reduction": [1000, 70_000], "moving_average": [10, 4100],
                               "matmul": [20, 70]}
#: moving_average also with rows longer than Triton's 1024-element block (a carry
#: across blocks) and not a power of two (Pallas' block rounded up and masked)
EXTRA_PARAMS = {"moving_average": {"window": 5, "series_length": 3000}}
SETTINGS = Settings(max_time_s=0.01, min_samples=2, warmup=1)


def _cases(kernel: str) -> list[Case]:
    spec = get_kernel(kernel)
    cases = spec.cases(sizes=SIZES[kernel])
    if kernel in EXTRA_PARAMS:
        cases += spec.cases(sizes=[6500], params=EXTRA_PARAMS[kernel])
    return cases


def _impl(kernel: str, framework: str, name: str) -> Any:
    return next(i for i in implementations(kernel, framework) if i.name == name)


def _measure_all(kernel: str, framework: str, name: str, cases: list[Case]) -> list[str]:
    """Measure the implementation on every case with the framework's CPU backend; the
    failures as lines (empty: every row ok and within the tolerance)."""
    from kernel_helpers import cpu_backend

    spec = get_kernel(kernel)
    impl = _impl(kernel, framework, name)
    backend = cpu_backend(framework)
    failures = []
    for case in cases:
        host = spec.make_inputs(case, np.random.default_rng(case.seed(SETTINGS.seed)))
        m = measure(spec, impl, case, backend, SETTINGS, host, spec.reference(case, host))
        where = f"{name} {case.variant} {case.dtype} {case.size} {dict(case.params)}"
        if m.fields["status"] != "ok":
            failures.append(f"{where}: {m.fields['status']} {m.fields.get('reason')}")
        elif not m.fields["rel_err"] <= spec.tolerance(case):
            failures.append(f"{where}: rel_err {m.fields['rel_err']}")
        elif not (m.fields["first_call_s"] > 0 and m.fields["setup_s"] >= 0):
            # the first-call figure and table read these (compilation lands there)
            failures.append(f"{where}: no first-call time {m.fields.get('first_call_s')}")
    return failures


def _clear_kernel_caches(module_suffix: str) -> None:
    """Forget the cached ``triton.jit`` kernels, so the next build decorates afresh (and
    imports triton again)."""
    for kernel in KERNELS:
        module = importlib.import_module(f"gpubench.kernels.{kernel}.{module_suffix}")
        for name in ("_kernel", "_kernels"):
            fn = getattr(module, name, None)
            if isinstance(fn, functools._lru_cache_wrapper):
                fn.cache_clear()


@pytest.mark.parametrize("kernel", KERNELS)
def test_custom_routes_are_registered_for_gpus(kernel: str) -> None:
    for framework, name in (("torch", "triton"), ("jax", "pallas")):
        impl = _impl(kernel, framework, name)
        assert impl.devices == ("gpu",)
        assert impl.source_file.endswith(f"with_{framework}_{name}")
    if kernel in ("elementwise", "reduction", "moving_average"):
        assert _impl(kernel, "torch", "compile").devices == ("gpu",)


def _triton_worker(kernels: list[str]) -> None:
    """Run in a subprocess with ``TRITON_INTERPRET=1`` from the start (``triton.jit``
    reads it when it decorates, and Triton decorates its own ``tl.sum`` and the like at
    import): measure the Triton rows, print ``{kernel: failures}`` as JSON.

    Triton 3.6's interpreter turns a scalar into an int with ``int(array_of_one)``, which
    NumPy 2.4 refuses ("only 0-dimensional arrays can be converted"): loops whose bounds
    are kernel arguments then fail. The patch takes the one element instead; it applies
    only while the interpreter runs a kernel (Triton restores ``tl.tensor`` after)."""
    import json

    import triton.runtime.interpreter as interp

    original = interp._patch_lang_tensor

    def patch_lang_tensor(tensor: Any, scope: Any) -> None:
        original(tensor, scope)
        tensor.__index__ = lambda self: int(np.asarray(self.handle.data).reshape(-1)[0])

    interp._patch_lang_tensor = patch_lang_tensor
    print(json.dumps({k: _measure_all(k, "torch", "triton", _cases(k)) for k in kernels}))


@pytest.fixture(scope="module")
def triton_failures() -> dict[str, list[str]]:
    """The Triton rows' failures per kernel, from one interpreter subprocess."""
    import json
    import subprocess

    pytest.importorskip("torch")
    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton is not installed (requirements-dev.txt; PyPI wheels exist for "
                    "Linux x86-64 only)")
    here = Path(__file__).resolve()
    paths = [str(here.parent), str(here.parents[1] / "src"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "TRITON_INTERPRET": "1",
           "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    proc = subprocess.run([sys.executable, str(here), "triton-worker", *KERNELS], env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kernel", KERNELS)
def test_triton_kernels_match_the_reference_in_the_interpreter(
        kernel: str, triton_failures: dict[str, list[str]]) -> None:
    failures = triton_failures[kernel]
    assert not failures, "\n".join(failures)



def _triton_builds(kernel: str, fp: str) -> list[tuple[Any, dict[str, str], dict[str, Any],
                                                       dict[str, int]]]:
    """(kernel, signature, constexprs, options) of every launch the ``triton`` row of
    ``kernel`` makes for one dtype (``fp32`` / ``fp64``), as the builders pass them."""
    module = importlib.import_module(f"gpubench.kernels.{kernel}.with_torch_triton")
    p = f"*{fp}"
    if kernel == "vector_add":
        return [(module._kernel(), {"a_ptr": p, "b_ptr": p, "c_ptr": p, "n": "i32"},
                 {"BLOCK": module.BLOCK}, {"num_warps": module.WARPS})]
    if kernel == "elementwise":
        return [(module._kernel(), {"a_ptr": p, "b_ptr": p, "out_ptr": p, "n": "i32"},
                 {"VARIANT": v, "BLOCK": module.BLOCK}, {"num_warps": module.WARPS})
                for v in module.VARIANTS.values()]
    if kernel == "reduction":
        partial_sums, finalize = module._kernels()
        builds = [(partial_sums, {"a_ptr": p, "b_ptr": p, "partials_ptr": "*fp64", "n": "i32",
                                  "nprog": "i32", "iters": "i32"},
                   {"MODE": mode, "BLOCK": module.BLOCK}, {"num_warps": module.WARPS})
                  for mode in module.MODES.values()]
        return builds + [(finalize, {"partials_ptr": "*fp64", "out_ptr": p, "nparts": "i32"},
                          {"RATIO": ratio, "PBLOCK": 1024}, {"num_warps": 4})
                         for ratio in (False, True)]
    if kernel == "moving_average":
        return [(module._kernel(), {"x_ptr": p, "out_ptr": p, "length": "i32",
                                    "window": "i32"},
                 {"BLOCK": module.MAX_BLOCK}, {"num_warps": 4})]
    bm, bn, bk, warps, stages = module.TILES["float32" if fp == "fp32" else "float64"]
    return [(module._kernel(), {"a_ptr": p, "b_ptr": p, "c_ptr": p, "n": "i32"},
             {"BM": bm, "BN": bn, "BK": bk, "GROUP": module.GROUP},
             {"num_warps": warps, "num_stages": stages})]


@pytest.mark.parametrize("fp", ["fp32", "fp64"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_triton_kernels_compile_for_h100(kernel: str, fp: str) -> None:
    """Triton compiles each kernel to an sm_90 cubin with its bundled ptxas, no GPU
    needed: what the interpreter cannot check (types the compiler rejects, loop-carried
    types, constexpr branches, float64 ``tl.dot``)."""
    pytest.importorskip("triton", reason="triton is not installed (requirements-dev.txt)")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    if os.environ.get("TRITON_INTERPRET"):
        pytest.skip("TRITON_INTERPRET is set: triton.jit gives interpreted functions")
    _clear_kernel_caches("with_torch_triton")
    for fn, signature, constexprs, options in _triton_builds(kernel, fp):
        src = ASTSource(fn=fn, signature={**signature, **dict.fromkeys(constexprs,
                                                                       "constexpr")},
                        constexprs=constexprs)
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)
        assert compiled.asm.get("cubin"), (kernel, fp, constexprs)

@pytest.mark.parametrize("kernel", KERNELS)
def test_pallas_kernels_match_the_reference_in_interpret_mode(kernel: str) -> None:
    pytest.importorskip("jax")
    pytest.importorskip("jax.experimental.pallas")
    failures = _measure_all(kernel, "jax", "pallas", _cases(kernel))
    assert not failures, "\n".join(failures)



#: GPU-sized cases for the lowering check: powers of two as the sweep runs them, and
#: shapes that are not (a ragged last block, a row and a K rounded up to a power of two)
LOWER_CASES: dict[str, list[tuple[int, dict[str, Any]]]] = {
    "vector_add": [(1 << 20, {}), (1000, {})],
    "elementwise": [(1 << 20, {}), (1000, {})],
    "reduction": [(1 << 20, {}), (1000, {})],
    "moving_average": [(1 << 20, {}), (6500, EXTRA_PARAMS["moving_average"])],
    "matmul": [(256, {}), (200, {})],
}


@pytest.mark.parametrize("kernel", KERNELS)
def test_pallas_kernels_lower_to_triton_for_cuda(kernel: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """With a GPU backend the builders ask for Pallas' Triton lowering (no interpreter);
    JAX lowers for the ``cuda`` platform without a GPU, so every case's kernel goes
    through the lowering rules here (power-of-two blocks, masked loads, the gather of
    the lagged row, cumsum, float64 dot): ``jax.jit`` is swapped for one that lowers
    instead of running."""
    from types import SimpleNamespace

    from kernel_helpers import cpu_backend

    pytest.importorskip("jax.experimental.pallas")
    import jax

    backend = cpu_backend("jax")  # starts JAX with float64 enabled
    real_jit = jax.jit

    def lowering_jit(fn: Any, **kwargs: Any) -> Any:
        return lambda *args: real_jit(fn, **kwargs).trace(*args).lower(
            lowering_platforms=("cuda",))

    spec = get_kernel(kernel)
    impl = _impl(kernel, "jax", "pallas")
    gpu = SimpleNamespace(device="gpu")
    lowered = 0
    for size, params in LOWER_CASES[kernel]:
        for case in spec.cases(sizes=[size], params=params or None):
            host = spec.make_inputs(case, np.random.default_rng(0))
            inputs = {k: backend.to_device(v) for k, v in host.items()}
            ctx = BuildContext(case, gpu, inputs, {}, 0, host)
            monkeypatch.setattr(jax, "jit", lowering_jit)
            try:
                text = impl.builder(ctx)().as_text()
            finally:
                monkeypatch.setattr(jax, "jit", real_jit)
            assert "xla.gpu.triton" in text, case
            lowered += 1
    assert lowered >= 4


def test_jax_reduce_window_moving_average_matches_the_reference_on_cpu() -> None:
    pytest.importorskip("jax")
    assert _impl("moving_average", "jax", "reduce_window").devices == ("gpu",)
    failures = _measure_all("moving_average", "jax", "reduce_window", _cases("moving_average"))
    assert not failures, "\n".join(failures)

@pytest.mark.parametrize("kernel", ["reduction", "moving_average"])
def test_torch_compile_rows_match_the_reference_on_cpu(kernel: str) -> None:
    pytest.importorskip("torch")
    spec = get_kernel(kernel)
    if kernel == "reduction":
        cases = [c for c in spec.cases(sizes=[70_000])
                 if (c.variant, c.dtype) in {("weighted_mean", "float32"),
                                             ("sumsq", "float64")}]
    else:
        cases = (spec.cases(sizes=[4100], dtypes=["float32"])
                 + spec.cases(sizes=[6500], dtypes=["float64"],
                              params=EXTRA_PARAMS["moving_average"]))
    failures = _measure_all(kernel, "torch", "compile", cases)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(("framework", "name", "blocked"), [
    ("torch", "triton", "triton"),
    ("jax", "pallas", "jax.experimental.pallas"),
])
def test_a_missing_package_gives_an_unavailable_row(
        framework: str, name: str, blocked: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip(framework)
    if framework == "torch":
        _clear_kernel_caches("with_torch_triton")
    monkeypatch.setitem(sys.modules, blocked, None)  # `import` now raises ImportError
    case = get_kernel("vector_add").cases(sizes=[1000], dtypes=["float32"])[0]
    from kernel_helpers import cpu_backend

    spec = get_kernel("vector_add")
    host = spec.make_inputs(case, np.random.default_rng(0))
    m = measure(spec, _impl("vector_add", framework, name), case, cpu_backend(framework),
                SETTINGS, host, spec.reference(case, host))
    assert m.fields["status"] == "unavailable"
    assert blocked in m.fields["reason"], m.fields["reason"]


def test_code_size_counts_the_kernels_inside_the_builders_helpers() -> None:
    """The code-size section reads each implementation's builder plus the module-level
    helpers it calls: a Triton row counts its ``triton.jit`` kernel, a Pallas row its
    nested kernel function, a ``torch.compile`` row its expression."""
    import pandas as pd

    from gpubench.report.sections import code_size

    rows = [(k, fw, name) for k in KERNELS for fw, name in
            (("torch", "triton"), ("jax", "pallas"))]
    rows += [(k, "torch", "compile") for k in ("reduction", "moving_average")]
    df = pd.DataFrame(rows, columns=["kernel", "framework", "implementation"])
    sizes = code_size(df).set_index(["kernel", "framework", "implementation"])
    assert len(sizes) == len(rows)
    for key in rows:
        assert sizes.loc[key, "python"] >= 8, key
        assert sizes.loc[key, "cuda_c"] == 0, key
    # the jitted kernel is in the count, not only the launcher
    assert sizes.loc[("reduction", "torch", "triton"), "python"] > 40
    assert sizes.loc[("moving_average", "torch", "compile"), "python"] > 15



def test_cupy_sliding_row_counts_as_a_user_written_kernel() -> None:
    """The CuPy claim "no compilation overhead for standard operations" leaves out CuPy's
    user-written kernels: the sliding RawKernel row is one."""
    from gpubench.report.claims import guide

    names = {i.name for i in implementations("moving_average", "cupy", "gpu")}
    assert "raw_kernel_sliding" in names
    assert "raw_kernel_sliding" in guide("cupy-gpu").compiled_implementations


if __name__ == "__main__" and sys.argv[1:2] == ["triton-worker"]:
    _triton_worker(sys.argv[2:])
