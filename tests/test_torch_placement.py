"""PyTorch's input placement: a copy that shares no memory with the host's inputs, made
once (a host copy before the transfer took 20 s of a 150 s GPU step)."""

from __future__ import annotations

import numpy as np
import pytest

from gpubench.backends.torch.adapter import TorchCPU, TorchGPU


def test_on_the_cpu_the_placed_tensor_is_a_copy():
    pytest.importorskip("torch")
    backend = TorchCPU()
    backend.start(1)
    a = np.arange(8, dtype=np.float64)
    t = backend.to_device(a)
    assert np.array_equal(t.numpy(), a)
    t[0] = 99.0
    assert a[0] == 0.0


class _Tensor:
    def __init__(self, host: np.ndarray, log: list) -> None:
        self.host, self.log = host, log

    def to(self, device: str) -> _Tensor:
        self.log.append(("to", device))
        return _Tensor(self.host.copy(), self.log)  # the transfer is a copy


class _Cuda:
    def __init__(self, log: list) -> None:
        self.log = log

    def synchronize(self) -> None:
        self.log.append(("synchronize",))


class _Torch:
    def __init__(self) -> None:
        self.log: list = []
        self.cuda = _Cuda(self.log)

    def from_numpy(self, host: np.ndarray) -> _Tensor:
        self.log.append(("from_numpy", host))
        return _Tensor(host, self.log)


def test_to_a_gpu_the_transfer_is_the_only_copy_and_it_is_finished():
    backend = TorchGPU()
    backend._torch = fake = _Torch()
    a = np.arange(8, dtype=np.float32)
    out = backend.to_device(a)
    (kind, host), *rest = fake.log
    assert kind == "from_numpy" and np.shares_memory(host, a)  # no host copy first
    assert rest == [("to", "cuda"), ("synchronize",)]
    assert not np.shares_memory(out.host, a)


def test_a_strided_input_reaches_the_gpu_contiguous():
    backend = TorchGPU()
    backend._torch = fake = _Torch()
    a = np.arange(16, dtype=np.float64)[::2]
    backend.to_device(a)
    host = fake.log[0][1]
    assert host.flags.c_contiguous and np.array_equal(host, a)
