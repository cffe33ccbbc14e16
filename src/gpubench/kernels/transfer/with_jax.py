"""transfer in JAX: ``jax.device_put`` to the GPU (host → device) and to the CPU device
(device → host), pageable memory only.

JAX allocates a new destination on every call (its arrays are immutable). Reading a
device array back with ``np.asarray`` is not a transfer to time: JAX caches the host copy
on the array after the first read, so later reads copy nothing. ``device_put`` onto the
CPU device makes a real copy every call and yields a CPU array, which NumPy then views
without copying. Both directions therefore also allocate the destination on every call;
for d2h that is fresh host memory, whose first touch costs page faults: on an H100 host,
256 MiB came back at 1.3 GB/s this way against 12.5 GB/s for CuPy, PyTorch and Numba
copying into a preallocated pageable buffer (64 K elements: 5.9 GB/s, the same as they).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpubench.spec import BuildContext, implementation


@implementation("transfer", "jax", "device_put", devices=("gpu",),
                variants=("h2d_pageable", "d2h_pageable"))
def device_put(ctx: BuildContext) -> Callable[[], Any]:
    import jax

    x = ctx.inputs["x"]  # host memory: the spec sets place_inputs = False
    gpu = jax.devices("gpu")[0]
    if ctx.case.variant == "h2d_pageable":
        return lambda: jax.device_put(x, gpu)
    cpu = jax.devices("cpu")[0]
    dev = jax.device_put(x, gpu).block_until_ready()
    return lambda: jax.device_put(dev, cpu)
