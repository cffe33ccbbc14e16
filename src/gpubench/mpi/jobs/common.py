"""What every MPI job shares: the job's :class:`Context` (communicator, backend, item,
the timed loop and the agreement of all ranks), the compute/communication
:class:`Split`, how the data is split over ranks, the correctness check's numbers and
the row (:func:`result`), the path-aware :class:`Channel` and the one-process timing.

Every job: a guarded set-up (local work; all ranks then agree whether it failed, as
the workshop book's §9.10.4 does), a correctness check against a float64 NumPy reference
of the same global data, then timed iterations (barrier before, device sync after, the
slowest rank's time kept, warm-up skipped). Only rank 0's return value is recorded.

Within the timed iterations each rank also adds up the seconds it spends computing and
communicating (:class:`Split`, the workshop book's §9.10.5); the ranks' totals per call
are then averaged (``compute_s``, ``comm_s``) and their maximum kept (``compute_max_s``,
``comm_max_s``), see :meth:`Context.agree_split`.

Communication paths: ``host`` (CPU ranks: NumPy buffers), ``direct`` (device buffers
handed to a CUDA-aware MPI), ``staged`` (device -> host copy, MPI on host buffers,
host -> device copy: what works with any MPI library).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpubench.harness import summarize
from gpubench.timing import Settings, mpi_agree, sample_until, warm_up

__all__ = ["AgreedError", "Channel", "Context", "Settings", "Split", "counts",
           "one_process_samples", "rel_err", "result", "split", "tolerance"]


class AgreedError(RuntimeError):
    """Every rank knows the item failed (the message holds each failing rank's reason)."""


class Split:
    """This rank's seconds computing and communicating, added up over the timed calls.

    A job wraps its local work (ended with a device sync, so the device's time lands
    here, not in the next MPI call) in :meth:`compute` and its MPI calls, with the
    device-host copies that exist only to carry a message (the staged path), in
    :meth:`comm`. What neither covers (waiting at the barrier, Python between the two)
    is the rest of the step's time."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.reset()

    def reset(self) -> None:
        self.compute_s = 0.0
        self.comm_s = 0.0

    def compute(self, fn: Callable[[], Any]) -> Any:
        t0 = self.clock()
        out = fn()
        self.compute_s += self.clock() - t0
        return out

    def comm(self, fn: Callable[[], Any]) -> Any:
        t0 = self.clock()
        out = fn()
        self.comm_s += self.clock() - t0
        return out


@dataclass
class Context:
    """What a job needs: the communicator, this rank's backend (``ad``, started on the
    rank's device) and the item to run."""

    comm: Any
    mpi: Any
    ad: Any
    item: dict[str, Any]
    settings: Settings
    seed: int
    index: int = 0
    fault: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: compute / communication fields of the row, set by :meth:`agree_split` (every job
    #: timed with :meth:`timed` that wrapped its work in :attr:`split`)
    split_fields: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.split = Split(getattr(self.mpi, "Wtime", time.perf_counter))
        self._operations: dict[tuple[str, Any], dict[str, Callable[..., Any]]] = {}

    def operations(self, spec: Any, dtype: Any) -> dict[str, Callable[..., Any]]:
        """This rank's implementation of a kernel the jobs compute with between messages
        (``stencil``, ``linear_grad``, ``axpy``: :attr:`~gpubench.spec.KernelSpec.suite`
        false), one operation per variant, built on first use for ``dtype`` (a name or
        an array's dtype) and kept for the item (:meth:`~gpubench.backends.base.Backend.
        build_kernel`, as the reduction and matmul jobs build theirs)."""
        key = (spec.name, dtype)
        ops = self._operations.get(key)
        if ops is None:
            name = np.dtype(dtype).name
            ops = self._operations[key] = {
                v: self.ad.build_kernel(spec.name, v, 1, name, {}) for v in spec.variants}
        return ops

    @property
    def rank(self) -> int:
        return int(self.comm.Get_rank())

    @property
    def size(self) -> int:
        return int(self.comm.Get_size())

    def rng(self, salt: int = 0) -> np.random.Generator:
        """This rank's stream: SeedSequence children, independent by construction
        (never ``seed + rank * 1000000``, docs/kernels.md)."""
        children = np.random.SeedSequence([self.seed, salt]).spawn(self.size)
        return np.random.default_rng(children[self.rank])

    def common_rng(self, salt: int = 0) -> np.random.Generator:
        """One stream every rank shares (the same parameters everywhere)."""
        return np.random.default_rng(np.random.SeedSequence([self.seed, salt, 7]))

    def guarded(self, fn: Callable[[], Any]) -> Any:
        """Run local work; if any rank failed, every rank raises :class:`AgreedError`."""
        try:
            if self.fault == f"raise_rank{self.rank}" and self.index == 0:
                raise RuntimeError("injected fault (GPUBENCH_MPI_FAULT)")
            out, err = fn(), ""
        except Exception as exc:  # noqa: BLE001 - reported by every rank below
            out, err = None, f"rank {self.rank}: {type(exc).__name__}: {exc}"[:400]
        errors = [e for e in self.comm.allgather(err) if e]
        if errors:
            raise AgreedError("; ".join(errors))
        return out

    def warm_up(self, fn: Callable[[], Any]) -> int:
        """Call ``fn`` ``warmup`` times, then until ``warmup_s`` has passed on the slowest
        rank (every rank takes the same decision, so collectives inside ``fn`` match).
        A job's own ``warmup_s`` (config ``mpi.jobs.<job>``) overrides the harness's.
        Returns the number of calls."""
        least = float(self.item.get("params", {}).get("warmup_s", self.settings.warmup_s))
        return warm_up(fn, self.settings.warmup, least, self.mpi.Wtime,
                       agree=lambda s: self.comm.allreduce(s, op=self.mpi.MAX))

    def timed(self, fn: Callable[[], Any]) -> list[float]:
        """Warm up, then time ``fn`` (which must end synchronised) until the spread is
        low or a cap is hit. Each sample is the slowest rank's time of one call.

        ``max_time_s`` caps the loop's wall time, as in the single-device harness: a cap
        on the sum of the samples alone let a microsecond call loop for hours, each pass
        costing a barrier, a reduction and a percentile of every sample so far. One
        reduction carries (call time, time measuring) to every rank, so all stop
        together."""
        self.warm_up(fn)
        mpi = self.mpi
        self.split.reset()
        calls = [0]

        def sample() -> tuple[None, float]:
            self.comm.Barrier()
            t0 = mpi.Wtime()
            fn()
            calls[0] += 1
            return None, mpi.Wtime() - t0

        samples = sample_until(sample, self.settings.rule(), mpi.Wtime,
                               agree=mpi_agree(self.comm, mpi.MAX)).samples
        self.agree_split(calls[0])
        return samples

    def agree_split(self, calls: int) -> None:
        """Every rank's compute and communication seconds per timed call, gathered:
        ``compute_s``/``comm_s`` their mean over ranks, ``compute_max_s``/``comm_max_s``
        the largest rank's (load imbalance; the rank that waited longest).

        The mean, not the maximum, is the split: on each rank compute + comm is at most
        its own time of the call, which is at most the slowest rank's (the sample), so
        ``compute_s + comm_s <= mean_s``; two maxima from different ranks need not be.
        Nothing recorded (a job that does not split): no fields. Collective."""
        calls = max(1, calls)
        per_rank = self.comm.allgather((self.split.compute_s / calls,
                                        self.split.comm_s / calls))
        if not any(c or m for c, m in per_rank):
            self.split_fields = {}
            return
        comp = [c for c, _ in per_rank]
        comm = [m for _, m in per_rank]
        self.split_fields = {"compute_s": sum(comp) / len(comp),
                             "comm_s": sum(comm) / len(comm),
                             "compute_max_s": max(comp), "comm_max_s": max(comm)}


def split(n: int, parts: int, index: int) -> tuple[int, int]:
    """(start, count) of part ``index`` when ``n`` items are split as evenly as possible."""
    base, extra = divmod(n, parts)
    start = index * base + min(index, extra)
    return start, base + (1 if index < extra else 0)


def counts(n: int, parts: int) -> list[int]:
    return [split(n, parts, i)[1] for i in range(parts)]


def rel_err(out: np.ndarray | float, ref: np.ndarray | float) -> float:
    out = np.asarray(out, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    denom = float(np.linalg.norm(ref.ravel())) or 1.0
    return float(np.linalg.norm((out - ref).ravel()) / denom)


def tolerance(dtype: str, n: int = 1) -> float:
    """Largest rel_err that passes: a few units in the last place, growing as sqrt(n)."""
    eps = float(np.finfo(dtype).eps) if np.dtype(dtype).kind == "f" else 0.0
    return max(8 * eps * math.sqrt(max(1, n)), 1e-12 if eps < 1e-10 else 1e-5)


def result(samples: list[float], **fields: Any) -> dict[str, Any]:
    """Rank 0's row fields: summary of the samples plus the job's own numbers."""
    stats = summarize(samples)
    out = {k: stats[k] for k in ("samples", "median_s", "mean_s", "min_s", "q1_s", "q3_s",
                                 "max_s", "iqr_s")}
    out.update(fields)
    out["_samples"] = list(samples)
    ok = fields.get("rel_err", 0.0) <= fields.get("tolerance", math.inf)
    out.setdefault("status", "ok" if ok else "wrong_result")
    if out["status"] == "wrong_result":
        out.setdefault("reason", f"rel_err {fields.get('rel_err'):.3g} > tolerance "
                                 f"{fields.get('tolerance'):.3g}")
    return out


# -- communication helpers ------------------------------------------------------------

class Channel:
    """Moves one device buffer through MPI by the item's path (direct, staged or host)."""

    def __init__(self, ctx: Context, path: str) -> None:
        self.ctx = ctx
        self.path = path

    def allreduce(self, send: Any, recv: Any, host_send: np.ndarray | None = None,
                  host_recv: np.ndarray | None = None) -> Any:
        ad, comm, mpi = self.ctx.ad, self.ctx.comm, self.ctx.mpi
        if self.path in ("direct", "host"):
            ad.block(send)
            comm.Allreduce(send, recv, op=mpi.SUM)
            return recv
        assert host_send is not None and host_recv is not None
        ad.download(send, host_send)
        comm.Allreduce(host_send, host_recv, op=mpi.SUM)
        return ad.upload(host_recv, recv)



def one_process_samples(ctx: Context, step: Callable[[], Any]) -> list[float]:
    """Warm up, then time ``step`` (which must end synchronised) in the one process that
    drives every device: no ranks to agree with, and the loop's cap is its wall time,
    not the sum of the samples (that let a microsecond step loop for hours)."""
    ctx.warm_up(step)
    clock = ctx.mpi.Wtime  # the one process's stand-in: time.perf_counter

    def sample() -> tuple[None, float]:
        t0 = clock()
        step()
        return None, clock() - t0

    return sample_until(sample, ctx.settings.rule(), clock).samples
