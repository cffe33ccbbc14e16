"""fft in NumPy: pocketfft, single-threaded.

NumPy >= 2 returns complex64 for complex64 input, but (seen with NumPy 2.4) the default
normalisation passes a Python int scale factor, the ufunc then picks its double loop,
and the transform is computed in double precision and rounded back: the result equals
the complex128 FFT rounded to complex64. So the complex64 row times NumPy as users call
it, which is a double-precision transform plus casts, not a single-precision one.

The transform writes into an output made and written once (``out=``, NumPy >= 2.0; the
same result to the bit): a fresh result per call would be mapped page by page in every
sample at the large sizes, which cuFFT's output from CuPy's pool never is.
"""

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("fft", "numpy", "pocketfft")
def pocketfft(ctx: BuildContext) -> Callable[[], Any]:
    import numpy as np

    x = ctx.inputs["x"]
    fn = np.fft.fft if ctx.case.variant == "1d" else np.fft.fftn
    y = np.full_like(x, 0)
    return lambda: fn(x, out=y)
