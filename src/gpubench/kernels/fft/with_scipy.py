"""fft in SciPy: ``scipy.fft.fft`` / ``scipy.fft.fftn``, the API the Numba/CuPy guide
shows ``cupyx.scipy.fft`` dropping into. A NumPy-backend implementation: the
CPU baseline as a SciPy user writes it, beside ``numpy.fft``.

SciPy's pocketfft (C++) keeps complex64 in single precision, unlike ``numpy.fft``'s
double-precision transform plus casts (with_numpy.py), and runs on one thread unless
``workers`` is passed, as here: a user's plain call. Without SciPy in the environment
the rows are ``unavailable`` with the import error.
"""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("fft", "numpy", "scipy_fft")
def scipy_fft(ctx: BuildContext) -> Callable[[], Any]:
    import scipy.fft

    fn = scipy.fft.fft if ctx.case.variant == "1d" else scipy.fft.fftn
    x = ctx.inputs["x"]
    return lambda: fn(x)
