"""fft in CuPy: ``cupy.fft.fft`` / ``cupy.fft.fftn``, i.e. cuFFT (the Numba/CuPy
guide), and ``cupyx.scipy.fft``, the same transforms behind SciPy's API (against
``scipy.fft`` on the CPU: with_scipy.py).

CuPy keeps complex64 in single precision (it does not upcast like NumPy < 2) and
caches cuFFT plans per shape, dtype and device: the first call builds the plan (it
lands in the first-call time), the timed calls reuse it, as any repeated use does.
"""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("fft", "cupy", "cufft", devices=("gpu",))
def cufft(ctx: BuildContext) -> Callable[[], Any]:
    import cupy

    fn = cupy.fft.fft if ctx.case.variant == "1d" else cupy.fft.fftn
    x = ctx.inputs["x"]
    return lambda: fn(x)


@implementation("fft", "cupy", "cupyx_scipy_fft", devices=("gpu",))
def cupyx_scipy_fft(ctx: BuildContext) -> Callable[[], Any]:
    """``cupyx.scipy.fft.fft`` / ``fftn``: SciPy's API on the GPU (the Numba/CuPy guide's
    drop-in for ``scipy.fft``), the same cuFFT plans underneath: against ``cufft`` it
    shows what the SciPy-compatible layer costs per call."""
    import cupyx.scipy.fft as cufft_scipy

    fn = cufft_scipy.fft if ctx.case.variant == "1d" else cufft_scipy.fftn
    x = ctx.inputs["x"]
    return lambda: fn(x)
