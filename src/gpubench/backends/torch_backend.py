"""PyTorch tensors (eager and autograd)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpubench.backends.base import Backend, Unavailable


class TorchBase(Backend):
    framework = "torch"
    torch_device = "cpu"

    def start(self, threads: int) -> dict[str, str]:
        try:
            import torch
        except Exception as exc:
            raise Unavailable(f"import torch failed: {type(exc).__name__}: {exc}") from exc
        torch.set_num_threads(threads)
        self._torch = torch
        return {"torch": torch.__version__, "torch_threads": str(torch.get_num_threads())}

    def to_device(self, array: np.ndarray) -> Any:
        return self._torch.from_numpy(np.array(array, copy=True)).to(self.torch_device)

    def to_host(self, value: Any) -> Any:
        if isinstance(value, self._torch.Tensor):
            return value.detach().cpu().numpy()
        return np.asarray(value)

    def empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        return self._torch.empty(shape, dtype=getattr(self._torch, dtype),
                                 device=self.torch_device)

    def poison(self, buffer: Any) -> None:
        buffer.fill_(float("nan"))


class TorchCPU(TorchBase):
    device = "cpu"
    torch_device = "cpu"
