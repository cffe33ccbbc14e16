"""NumPy's large-size rows time the arithmetic, not first-touch page faults: its
implementations write into buffers made and written at build, never into a fresh array
per call (which the OS maps page by page in every sample at 2**24 elements), and still
give the right answer call after call.

Left as users call them: ``scipy_fft`` (``scipy.fft`` has no ``out=``: a fresh result
per call), and ``numpy.fft``'s own complex128 temporaries for a complex64 transform
(it computes in double precision, fft/with_numpy.py)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from kernel_helpers import cpu_backend

from gpubench.harness import Settings, build_context
from gpubench.spec import Case, get_kernel, implementations

#: the kernels whose NumPy implementations move arrays of the data's size per call
KERNELS = ("vector_add", "elementwise", "moving_average", "fft", "matmul")
SIZE = {"matmul": 128}
#: large enough that NumPy's ufunc buffers (8,192 elements per operand, whatever the
#: size) stay well under a quarter of one input
N = 1 << 18
#: (kernel, implementation, dtype) whose library allocates temporaries of its own
LIBRARY_TEMPORARIES = {("fft", "pocketfft", "complex64")}


def _cases() -> list:
    out = []
    for kernel in KERNELS:
        spec = get_kernel(kernel)
        for impl in implementations(kernel, "numpy", "cpu"):
            if impl.name == "scipy_fft":
                continue
            for case in spec.cases(sizes=[SIZE.get(kernel, N)]):
                if impl.supports(case)[0]:
                    out.append(pytest.param(impl, case, id=f"{kernel}-{impl.name}-"
                                            f"{case.variant}-{case.dtype}"))
    return out


def _result(ctx, returned):
    """What the harness checks: the returned result, else the one output buffer."""
    return returned if returned is not None else next(iter(ctx.outputs.values()))


@pytest.mark.parametrize(("impl", "case"), _cases())
def test_numpy_writes_into_buffers_made_at_build(impl, case: Case) -> None:
    spec = get_kernel(case.kernel)
    host = spec.make_inputs(case, np.random.default_rng(3))
    ref = spec.reference(case, host)
    ctx = build_context(spec, case, cpu_backend("numpy"), Settings(), host)
    call = impl.builder(ctx)
    first = _result(ctx, call())
    nbytes = min(np.asarray(v).nbytes for v in host.values())
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(3):
            returned = call()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    # no array of the data's size is allocated per call (NumPy reports its buffers to
    # tracemalloc): each call writes where the previous one did
    if (case.kernel, impl.name, case.dtype) not in LIBRARY_TEMPORARIES:
        assert peak < nbytes / 4, f"{peak} bytes allocated per call ({nbytes} per input)"
    again = _result(ctx, returned)
    assert again is first or np.shares_memory(again, first)
    assert again.__array_interface__["data"][0] == first.__array_interface__["data"][0]
    check = spec.check(case, again, ref)
    assert check.passed, check.reason
