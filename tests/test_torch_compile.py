"""torch.compile for the elementwise kernel: correct on the CPU device, registered for GPUs."""

from __future__ import annotations

import numpy as np
import pytest

from gpubench.spec import BuildContext, Case, get_kernel, implementations

torch = pytest.importorskip("torch")


def test_compiled_elementwise_matches_reference_on_cpu():
    # The implementation runs on GPU steps only (compile cost); its code is device-neutral,
    # so build it against the CPU backend here and check the fused result.
    from kernel_helpers import cpu_backend

    spec = get_kernel("elementwise")
    impl = next(i for i in implementations("elementwise", "torch") if i.name == "compile")
    assert impl.devices == ("gpu",)
    backend = cpu_backend("torch")
    for variant in ("rational", "sigmoid"):
        case = Case("elementwise", variant, 3000, "float32", {})
        inputs = spec.make_inputs(case, np.random.default_rng(1))
        ctx = BuildContext(case, backend, {k: backend.to_device(v) for k, v in inputs.items()},
                           {}, 0, inputs)
        result = backend.to_host(impl.builder(ctx)())
        check = spec.check(case, result, spec.reference(case, inputs))
        assert check.passed, check
