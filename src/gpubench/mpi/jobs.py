"""The MPI jobs of docs/kernels.md, each written once against the framework's
:class:`~gpubench.backends.base.Backend` (the adapter the single-device rows use too).

The local computations of the reduction, matmul and Monte Carlo jobs are the kernels'
own implementations (``kernels/<kernel>/with_<framework>.py``, through
:meth:`~gpubench.backends.base.Backend.build_kernel`); the halo stencil and the
linear model's gradient, which no kernel computes, are backend methods.

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
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpubench.harness import summarize
from gpubench.kernels.matmul import SPEC as MATMUL
from gpubench.kernels.monte_carlo_pi import SPEC as MONTE_CARLO_PI
from gpubench.kernels.reduction import SPEC as REDUCTION
from gpubench.mpi.catalog import mpi_job, registered
from gpubench.timing import Settings, mpi_agree, sample_until, warm_up

__all__ = ["JOB_FUNCTIONS", "AgreedError", "Context", "Settings"]

#: the model of the workshop book's §9.8.2: 100 features, 10 outputs
GRAD_FEATURES = 100
GRAD_OUTPUTS = 10
HALO_ALPHA = 0.25


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


# -- the jobs ---------------------------------------------------------------------------

@mpi_job(order=10, size_meaning="global elements", scaling="strong", kernel=REDUCTION,
         defaults={"sizes": [1 << 20], "dtype": "float32"})
def job_reduction(ctx: Context) -> dict[str, Any] | None:
    """The workshop book's §9.6.1, §9.7.1, §9.8.1, §9.9.1: local sum of squares on each
    device, then an MPI reduction of the partial sums (a host scalar, as the book does)."""
    n, dtype = int(ctx.item["size"]), ctx.item["dtype"]
    _start, count = split(n, ctx.size, ctx.rank)

    def setup() -> tuple[Any, float]:
        host = ctx.rng(1).standard_normal(count).astype(dtype)
        sumsq = ctx.ad.build_kernel(REDUCTION.name, "sumsq", count, dtype,
                                    {"a": ctx.ad.to_device(host)})
        sumsq()  # compile / first call outside the timed loop
        return sumsq, float(np.dot(host.astype(np.float64), host.astype(np.float64)))

    sumsq, ref_local = ctx.guarded(setup)
    send = np.zeros(1, np.float64)
    recv = np.zeros(1, np.float64)

    sp = ctx.split

    def step() -> None:
        # on the host: the device has finished
        send[0] = sp.compute(lambda: float(ctx.ad.to_host(sumsq())))
        sp.comm(lambda: ctx.comm.Allreduce(send, recv, op=ctx.mpi.SUM))

    step()
    ref = ctx.comm.allreduce(ref_local, op=ctx.mpi.SUM)
    err = rel_err(recv[0], ref)
    samples = ctx.timed(step)
    if ctx.rank:
        return None
    res = result(samples, rel_err=err, tolerance=tolerance(dtype, n))
    res["gbps"] = n * np.dtype(dtype).itemsize / res["median_s"] / 1e9
    return res


@mpi_job(order=20, size_meaning="matrix order", scaling="strong", kernel=MATMUL,
         buffers=True, row_per_rank=True, defaults={"sizes": [256], "dtype": "float64"})
def job_matmul(ctx: Context) -> dict[str, Any] | None:
    """The workshop book's §9.6.2, §9.11.3: rows of A scattered, B broadcast, C = A B on
    each device, rows of C gathered on rank 0."""
    n, dtype, path = int(ctx.item["size"]), ctx.item["dtype"], ctx.item["path"]
    ad, comm = ctx.ad, ctx.comm
    rows = counts(n, ctx.size)
    elems = [r * n for r in rows]
    offsets = [int(x) for x in np.cumsum([0, *elems[:-1]])]
    mine = rows[ctx.rank]
    mpi_type = ctx.mpi.DOUBLE if dtype == "float64" else ctx.mpi.FLOAT
    direct = path == "direct"

    def setup() -> dict[str, Any]:
        st: dict[str, Any] = {}
        if ctx.rank == 0:
            rng = ctx.common_rng(2)
            st["A"] = rng.standard_normal((n, n)).astype(dtype)
            st["B"] = rng.standard_normal((n, n)).astype(dtype)
            st["C"] = np.empty((n, n), dtype)
        else:
            st["A"], st["C"] = None, None
            st["B"] = np.empty((n, n), dtype)
        st["a_loc"] = np.zeros((mine, n), dtype)
        st["c_loc"] = np.empty((mine, n), dtype)
        if direct:  # the same buffers on the device
            st["dA"] = ad.to_device(st["A"]) if ctx.rank == 0 else None
            st["dC"] = ad.empty((n, n), dtype) if ctx.rank == 0 else None
            st["dB"] = ad.to_device(st["B"]) if ctx.rank == 0 else ad.empty((n, n), dtype)
            st["in"] = {"a": ad.empty((mine, n), dtype), "b": st["dB"]}
        else:  # device copies the staged step writes into
            st["in"] = {"a": ad.to_device(st["a_loc"]),
                        "b": ad.to_device(np.zeros((n, n), dtype))}
        st["out"] = {"c": ad.empty((mine, n), dtype)}
        st["mm"] = ad.build_kernel(MATMUL.name, "default", n, dtype, st["in"], st["out"])
        ad.block(st["mm"]())  # compile outside timing
        return st

    st = ctx.guarded(setup)
    ins = st["in"]

    def local_product() -> Any:
        """C = A B of this rank's rows: the matmul kernel's implementation."""
        c = st["mm"]()
        return st["out"]["c"] if c is None else c

    sp = ctx.split

    def computed() -> Any:
        c = local_product()
        ad.block(c)
        return c

    def scatter_staged() -> None:
        comm.Scatterv([st["A"], elems, offsets, mpi_type] if ctx.rank == 0 else None,
                      [st["a_loc"], mpi_type], root=0)
        comm.Bcast([st["B"], mpi_type], root=0)
        ins["a"] = ad.upload(st["a_loc"], ins["a"])
        ins["b"] = ad.upload(st["B"], ins["b"])

    def gather_staged(c: Any) -> None:
        ad.download(c, st["c_loc"])
        comm.Gatherv([st["c_loc"], mpi_type],
                     [st["C"], elems, offsets, mpi_type] if ctx.rank == 0 else None, root=0)

    def step_staged() -> None:
        sp.comm(scatter_staged)
        c = sp.compute(computed)
        sp.comm(lambda: gather_staged(c))

    def scatter_direct() -> None:
        comm.Scatterv([st["dA"], elems, offsets, mpi_type] if ctx.rank == 0 else None,
                      [ins["a"], mine * n, mpi_type], root=0)
        comm.Bcast([st["dB"], mpi_type], root=0)

    def step_direct() -> None:
        sp.comm(scatter_direct)
        c = sp.compute(computed)
        sp.comm(lambda: comm.Gatherv(
            [c, mpi_type], [st["dC"], elems, offsets, mpi_type] if ctx.rank == 0 else None,
            root=0))

    step = step_direct if direct else step_staged
    step()
    err = math.nan
    if ctx.rank == 0:
        out = ad.to_host(st["dC"]) if direct else st["C"]
        ref = st["A"].astype(np.float64) @ st["B"].astype(np.float64)
        err = rel_err(out, ref)
    samples = ctx.timed(step)
    if ctx.rank:
        return None
    return result(samples, rel_err=err, tolerance=tolerance(dtype, n) * 10)


def rank_seed(seed: int, rank: int) -> int:
    """The seed of a rank's generator: hashed from (seed, rank) by SeedSequence, so ranks
    get unrelated streams (never ``seed + rank * 10**6``, docs/kernels.md); 63 bits, which
    every framework's seed argument takes."""
    return int(np.random.SeedSequence([seed, rank]).generate_state(1, np.uint64)[0]) >> 1


@mpi_job(order=30, size_meaning="global samples", scaling="strong", kernel=MONTE_CARLO_PI,
         dtype="float64", defaults={"sizes": [1 << 20]})
def job_monte_carlo_pi(ctx: Context) -> dict[str, Any] | None:
    """The workshop book's §9.7.2 done right: independent streams per rank (and per device thread),
    hit counts summed with MPI."""
    n = int(ctx.item["size"])
    _, count = split(n, ctx.size, ctx.rank)
    send = np.zeros(1, np.int64)
    recv = np.zeros(1, np.int64)
    seed = rank_seed(ctx.seed, ctx.rank)

    def setup() -> Callable[[], Any] | None:
        if not count:
            return None
        pi_local = ctx.ad.build_kernel(MONTE_CARLO_PI.name, "default", count, "float64", {},
                                       seed=seed)
        pi_local()  # compile outside timing
        return pi_local

    pi_local = ctx.guarded(setup)

    def hits() -> int:
        """This rank's points inside the circle, back from the kernel's 4 hits / count."""
        if pi_local is None:
            return 0
        return round(float(ctx.ad.to_host(pi_local())) * count / 4.0)

    sp = ctx.split

    def step() -> None:
        send[0] = sp.compute(hits)
        sp.comm(lambda: ctx.comm.Allreduce(send, recv, op=ctx.mpi.SUM))

    step()
    estimate = 4.0 * float(recv[0]) / n
    sigma = math.sqrt(math.pi * (4 - math.pi) / n)
    samples = ctx.timed(step)
    if ctx.rank:
        return None
    res = result(samples, rel_err=abs(estimate - math.pi) / math.pi,
                 tolerance=6 * sigma / math.pi)
    if res["status"] != "ok":
        res["reason"] = f"pi estimate {estimate:.6f} is more than 6 sigma from pi"
    return res


@mpi_job(order=40, size_meaning="global batch rows", scaling="strong", buffers=True,
         defaults={"sizes": [4096], "dtype": "float32"})
def job_grad_avg(ctx: Context) -> dict[str, Any] | None:
    """The workshop book's §9.8.2: data-parallel step of a linear model; local gradients
    averaged with one Allreduce of the flattened gradient, then the same update on every
    rank."""
    n, dtype, path = int(ctx.item["size"]), ctx.item["dtype"], ctx.item["path"]
    ad = ctx.ad
    _, rows = split(n, ctx.size, ctx.rank)
    f_, o_ = GRAD_FEATURES, GRAD_OUTPUTS
    nparams = o_ * f_ + o_
    lr = 1e-3

    def setup() -> dict[str, Any]:
        rng = ctx.rng(3)
        x = rng.standard_normal((rows, f_)).astype(dtype)
        y = rng.standard_normal((rows, o_)).astype(dtype)
        p0 = (0.1 * ctx.common_rng(3).standard_normal(nparams)).astype(dtype)
        st = {"x": ad.to_device(x), "y": ad.to_device(y), "p0": p0, "hx": x, "hy": y,
              "recv": ad.to_device(np.zeros(nparams, dtype)),
              "hs": np.zeros(nparams, dtype), "hr": np.zeros(nparams, dtype)}
        ad.block(ad.linear_grad(ad.to_device(p0), st["x"], st["y"]))  # compile
        return st

    st = ctx.guarded(setup)
    chan = Channel(ctx, path)
    state = {"p": ad.to_device(st["p0"])}

    def averaged_grad(p: Any) -> Any:
        g = ad.linear_grad(p, st["x"], st["y"])
        return chan.allreduce(g, st["recv"], st["hs"], st["hr"])

    # check: the averaged gradient at p0 equals the full-batch gradient (float64)
    total = ad.to_host(averaged_grad(state["p"])).astype(np.float64) / n
    w = st["p0"][:o_ * f_].reshape(o_, f_).astype(np.float64)
    b = st["p0"][o_ * f_:].astype(np.float64)
    r = st["hx"].astype(np.float64) @ w.T + b - st["hy"].astype(np.float64)
    local_ref = np.concatenate([(2 * (r.T @ st["hx"].astype(np.float64))).ravel(),
                                2 * r.sum(axis=0)])
    ref = np.zeros_like(local_ref)
    ctx.comm.Allreduce(local_ref, ref, op=ctx.mpi.SUM)
    err = rel_err(total, ref / n)

    sp = ctx.split

    def local_grad() -> Any:
        g = ad.linear_grad(state["p"], st["x"], st["y"])
        ad.block(g)
        return g

    def update(g: Any) -> Any:
        p = ad.axpy(state["p"], g, lr / n)
        ad.block(p)
        return p

    def step() -> None:
        g = sp.compute(local_grad)
        g = sp.comm(lambda: chan.allreduce(g, st["recv"], st["hs"], st["hr"]))
        state["p"] = sp.compute(lambda: update(g))

    samples = ctx.timed(step)
    if ctx.rank:
        return None
    res = result(samples, rel_err=err, tolerance=tolerance(dtype, n) * 10)
    res["gbps"] = nparams * np.dtype(dtype).itemsize / res["median_s"] / 1e9
    return res


def halo_exchange(ctx: Context, u: Any, n: int, path: str, bufs: dict[str, np.ndarray]) -> Any:
    """The workshop book's §9.11.1 on a periodic ring: the last interior cell goes right
    into the right neighbour's left ghost, the first goes left; two Sendrecv calls."""
    ad, comm = ctx.ad, ctx.comm
    left, right = (ctx.rank - 1) % ctx.size, (ctx.rank + 1) % ctx.size
    if path in ("direct", "host"):
        ad.block(u)
        comm.Sendrecv(ad.view(u, n, n + 1), dest=right, sendtag=1,
                      recvbuf=ad.view(u, 0, 1), source=left, recvtag=1)
        comm.Sendrecv(ad.view(u, 1, 2), dest=left, sendtag=2,
                      recvbuf=ad.view(u, n + 1, n + 2), source=right, recvtag=2)
        return u
    ad.edges_to_host(u, n, bufs["sr"], bufs["sl"])
    comm.Sendrecv(bufs["sr"], dest=right, sendtag=1, recvbuf=bufs["rl"], source=left,
                  recvtag=1)
    comm.Sendrecv(bufs["sl"], dest=left, sendtag=2, recvbuf=bufs["rr"], source=right,
                  recvtag=2)
    return ad.set_ghosts(u, bufs["rl"], bufs["rr"])


def halo_error(ctx: Context, u0: np.ndarray, out: np.ndarray, k: int) -> float:
    """Global relative error of ``k`` stencil steps on the periodic ring, every rank
    checking its own cells in parallel.

    After k steps a cell depends on the k cells each side of it, so a rank needs only
    the k edge cells of each neighbour's initial data: it steps its slab widened by
    them in float64, shrinking by one cell a side per step, and what is left is exact
    for its own cells. Gathering the whole domain on rank 0 instead cost 10 s and more
    per item at 2**26 cells a rank (2**28 cells and np.roll copies on one core).
    """
    comm = ctx.comm
    left, right = (ctx.rank - 1) % ctx.size, (ctx.rank + 1) % ctx.size
    if min(comm.allgather(len(u0))) < k:  # slabs thinner than the stencil's reach
        parts, ref_parts = comm.allgather(out), comm.allgather(u0)
        ref = np.concatenate(ref_parts).astype(np.float64)
        for _ in range(k):
            ref = ref + HALO_ALPHA * (np.roll(ref, 1) - 2 * ref + np.roll(ref, -1))
        return rel_err(np.concatenate(parts), ref)
    from_left = comm.sendrecv(u0[-k:], dest=right, sendtag=11, source=left, recvtag=11)
    from_right = comm.sendrecv(u0[:k], dest=left, sendtag=12, source=right, recvtag=12)
    ref = np.concatenate([from_left, u0, from_right]).astype(np.float64)
    for _ in range(k):
        ref = ref[1:-1] + HALO_ALPHA * (ref[:-2] - 2 * ref[1:-1] + ref[2:])
    diff = out.astype(np.float64) - ref
    num = comm.allreduce(float(np.dot(diff, diff)))
    den = comm.allreduce(float(np.dot(ref, ref)))
    return math.sqrt(num) / (math.sqrt(den) or 1.0)


def halo_post(ctx: Context, u: Any, n: int, path: str,
              bufs: dict[str, np.ndarray]) -> list[Any]:
    """The same exchange as :func:`halo_exchange`, posted and not waited for (the
    workshop book's §9.10.2): ``Irecv`` into the ghosts, ``Isend`` of the edge cells.
    Returns the requests; the ghosts are valid after :func:`halo_finish`."""
    ad, comm = ctx.ad, ctx.comm
    left, right = (ctx.rank - 1) % ctx.size, (ctx.rank + 1) % ctx.size
    if path in ("direct", "host"):
        ad.block(u)
        return [comm.Irecv(ad.view(u, 0, 1), source=left, tag=1),
                comm.Irecv(ad.view(u, n + 1, n + 2), source=right, tag=2),
                comm.Isend(ad.view(u, n, n + 1), dest=right, tag=1),
                comm.Isend(ad.view(u, 1, 2), dest=left, tag=2)]
    ad.edges_to_host(u, n, bufs["sr"], bufs["sl"])
    return [comm.Irecv(bufs["rl"], source=left, tag=1),
            comm.Irecv(bufs["rr"], source=right, tag=2),
            comm.Isend(bufs["sr"], dest=right, tag=1),
            comm.Isend(bufs["sl"], dest=left, tag=2)]


def halo_finish(ctx: Context, u: Any, path: str, bufs: dict[str, np.ndarray],
                requests: list[Any]) -> Any:
    """Wait for :func:`halo_post`'s messages; staged: write the ghosts to the device."""
    ctx.mpi.Request.Waitall(requests)
    if path in ("direct", "host"):
        return u
    return ctx.ad.set_ghosts(u, bufs["rl"], bufs["rr"])


def _finished(ad: Any, value: Any) -> Any:
    ad.block(value)
    return value


def halo_blocking_step(ctx: Context, u: Any, out: Any, n: int, path: str,
                       bufs: dict[str, np.ndarray]) -> tuple[Any, Any]:
    """One step of the halo job: exchange (two ``Sendrecv``), then the whole stencil.
    Returns (new state, the buffer the next step writes into)."""
    ad, sp = ctx.ad, ctx.split
    u = sp.comm(lambda: halo_exchange(ctx, u, n, path, bufs))
    out = sp.compute(lambda: _finished(ad, ad.stencil(u, out, HALO_ALPHA)))
    return out, u


def halo_overlap_step(ctx: Context, u: Any, out: Any, n: int, path: str,
                      bufs: dict[str, np.ndarray]) -> tuple[Any, Any]:
    """One step of the halo_overlap job: post the exchange, compute cells 2..n-1 (they
    need no ghost) while the messages fly, wait, then compute cells 1 and n. The same
    cells by the same formula as :func:`halo_blocking_step`, so the same answer."""
    ad, sp = ctx.ad, ctx.split
    requests = sp.comm(lambda: halo_post(ctx, u, n, path, bufs))
    if n > 2:
        out = sp.compute(lambda: _finished(ad, ad.stencil_cells(u, out, HALO_ALPHA, 2, n)))
    u = sp.comm(lambda: halo_finish(ctx, u, path, bufs, requests))

    def edges() -> Any:
        new = ad.stencil_cells(u, out, HALO_ALPHA, 1, 2)
        if n > 1:
            new = ad.stencil_cells(u, new, HALO_ALPHA, n, n + 1)
        return _finished(ad, new)

    return sp.compute(edges), u


def run_halo(ctx: Context, overlap: bool) -> dict[str, Any] | None:
    """The halo and halo_overlap jobs: the same domain, data, check and timing; only the
    step differs (:func:`halo_blocking_step` or :func:`halo_overlap_step`)."""
    size, dtype, path, mode = (int(ctx.item["size"]), ctx.item["dtype"], ctx.item["path"],
                               ctx.item["mode"])
    steps = int(ctx.item.get("params", {}).get("steps", 100))
    ad = ctx.ad
    n = split(size, ctx.size, ctx.rank)[1] if mode == "strong" else size
    global_n = size if mode == "strong" else size * ctx.size
    local_counts = counts(size, ctx.size) if mode == "strong" else [size] * ctx.size
    bufs = {k: np.zeros(1, dtype) for k in ("sr", "sl", "rl", "rr")}

    def setup() -> dict[str, Any]:
        if n < 1:
            raise ValueError(f"{global_n} cells cannot be split over {ctx.size} ranks")
        u0 = np.zeros(n + 2, dtype)
        u0[1:-1] = ctx.rng(4).random(n).astype(dtype)
        u, out = ad.to_device(u0), ad.to_device(u0)
        ad.block(ad.stencil(u, out, HALO_ALPHA))  # compile
        if overlap:
            ad.block(ad.stencil_cells(u, out, HALO_ALPHA, 1, 2))
        return {"u0": u0, "u": u, "out": out}

    st = ctx.guarded(setup)

    def advance(state: dict[str, Any], k: int, step: Callable[..., tuple[Any, Any]]) -> None:
        for _ in range(k):
            state["u"], state["out"] = step(ctx, state["u"], state["out"], n, path, bufs)
        ad.block(state["u"])

    def fresh() -> dict[str, Any]:
        return {"u": ad.to_device(st["u0"]), "out": ad.to_device(st["u0"])}

    take = halo_overlap_step if overlap else halo_blocking_step
    state = fresh()
    check_steps = min(steps, 10)
    advance(state, check_steps, take)
    interior = np.ascontiguousarray(ad.to_host(state["u"])[1:-1])
    err = halo_error(ctx, st["u0"][1:-1], interior, check_steps)
    apart = 0.0
    if overlap:  # the same answer as the blocking exchange, on the same data
        blocking = fresh()
        advance(blocking, check_steps, halo_blocking_step)
        other = ad.to_host(blocking["u"])[1:-1].astype(np.float64)
        num = ctx.comm.allreduce(float(np.sum((interior - other) ** 2)))
        den = ctx.comm.allreduce(float(np.sum(other ** 2)))
        apart = math.sqrt(num) / (math.sqrt(den) or 1.0)
    samples = ctx.timed(lambda: advance(state, steps, take))
    if ctx.rank:
        return None
    tol = tolerance(dtype, global_n)
    res = result(samples, rel_err=err, tolerance=tol)
    if apart > tol:
        res.update(status="wrong_result",
                   reason=f"the overlapped exchange's answer is {apart:.3g} (relative) "
                          f"from the blocking one's after {check_steps} steps")
    # each step reads and writes every cell once (a 3-point stencil from cache)
    res["gbps"] = 2 * sum(local_counts) * np.dtype(dtype).itemsize * steps / \
        res["median_s"] / 1e9
    return res


@mpi_job(order=50, size_meaning="", scaling="by_mode", buffers=True,
         defaults={"sizes": [1 << 16], "dtype": "float64", "steps": 100,
                   "scaling": ["strong", "weak"]})
def job_halo(ctx: Context) -> dict[str, Any] | None:
    """1D domain decomposition with one ghost cell per side, an explicit heat-equation
    stencil; strong (global size fixed) or weak (size per rank fixed) scaling. Blocking
    exchange: two ``Sendrecv``, then the stencil."""
    return run_halo(ctx, overlap=False)


@mpi_job(order=55, size_meaning="", scaling="by_mode", buffers=True,
         defaults={"sizes": [1 << 16], "dtype": "float64", "steps": 100,
                   "scaling": ["strong", "weak"]})
def job_halo_overlap(ctx: Context) -> dict[str, Any] | None:
    """The halo job with its exchange overlapped (the workshop book's §9.10.2):
    ``Isend``/``Irecv`` posted, the interior computed while the messages fly,
    ``Waitall``, then the two boundary cells. Checked against the float64 reference and
    against the blocking exchange's answer."""
    return run_halo(ctx, overlap=True)


@mpi_job(order=60, size_meaning="message bytes", buffers=True, message=True, dtype="uint8",
         min_ranks=2,
         defaults={"min_bytes": 1, "max_bytes": 1 << 20})
def job_p2p(ctx: Context) -> dict[str, Any] | None:
    """Ping-pong between ranks 0 and 1 (osu_latency / osu_bw style): one sample is a
    round trip; latency is half of it, bandwidth the message over that half."""
    nbytes, path = int(ctx.item["size"]), ctx.item["path"]
    nccl_mode = ctx.item.get("mode") == "nccl"
    ad, comm = ctx.ad, ctx.comm
    if ctx.size < 2:
        raise AgreedError("p2p needs 2 ranks")
    pattern = ctx.common_rng(5).integers(0, 255, nbytes, dtype=np.uint8)

    def setup() -> dict[str, Any]:
        st: dict[str, Any] = {"host": np.zeros(nbytes, np.uint8)}
        if ctx.rank == 0:
            st["host"][...] = pattern
        if path != "host" and ctx.rank < 2:
            st["dev"] = ad.to_device(st["host"])
        if nccl_mode:  # collective: every rank joins the communicator
            st["nccl"] = ad.nccl_communicator(ctx)
        return st

    st = ctx.guarded(setup)
    peer = 1 - ctx.rank
    host = st["host"]

    def ping() -> None:
        if ctx.rank > 1:
            return
        first = ctx.rank == 0
        for turn in (0, 1):
            sending = (turn == 0) == first
            if nccl_mode:
                ad.nccl_send_recv(st["nccl"], st["dev"], peer, sending)
            elif path == "host":
                comm.Send(host, dest=peer) if sending else comm.Recv(host, source=peer)
            elif path == "direct":
                if sending:
                    comm.Send(st["dev"], dest=peer)
                else:
                    comm.Recv(st["dev"], source=peer)
            elif sending:
                ad.download(st["dev"], host)
                comm.Send(host, dest=peer)
            else:
                comm.Recv(host, source=peer)
                st["dev"] = ad.upload(host, st["dev"])
        if path != "host":
            ad.block(st["dev"])

    ping()
    ok = True
    if ctx.rank == 0:
        back = host if path == "host" else ad.to_host(st["dev"])
        ok = bool(np.array_equal(back, pattern))
    samples = ctx.timed(lambda: ctx.split.comm(ping))  # nothing to compute: all message
    if ctx.rank:
        return None
    res = result(samples, rel_err=0.0 if ok else 1.0, tolerance=0.0)
    half = res["median_s"] / 2
    res["latency_us"] = half * 1e6
    res["gbps"] = nbytes / half / 1e9
    if not ok:
        res["reason"] = "the echoed message differs from the one sent"
    return res


@mpi_job(order=70, size_meaning="buffer bytes", buffers=True, message=True,
         dtype="float32", defaults={"min_bytes": 4, "max_bytes": 1 << 20, "nccl": True})
def job_allreduce(ctx: Context) -> dict[str, Any] | None:
    """Allreduce (sum) of float32 buffers, out of place; algorithm bandwidth and
    nccl-tests bus bandwidth. Mode names the implementation (MPI or NCCL)."""
    nbytes, path, mode = int(ctx.item["size"]), ctx.item["path"], ctx.item["mode"]
    ad = ctx.ad
    count = max(1, nbytes // 4)
    base = ctx.common_rng(6).standard_normal(count).astype(np.float32)
    mine = (base * np.float32(ctx.rank + 1)).astype(np.float32)
    expected = base.astype(np.float64) * ctx.size * (ctx.size + 1) / 2

    def setup() -> dict[str, Any]:
        st: dict[str, Any] = {"hs": mine.copy(), "hr": np.zeros(count, np.float32)}
        if path != "host":
            st["send"] = ad.to_device(mine)
            st["recv"] = ad.to_device(np.zeros(count, np.float32))
        if mode == "nccl":
            st["nccl"] = ad.nccl_allreduce(ctx, st["send"], st["recv"])
        return st

    st = ctx.guarded(setup)
    chan = Channel(ctx, path)
    if mode == "nccl":
        def step() -> None:
            ctx.split.comm(st["nccl"])
    elif path == "host":
        def step() -> None:
            ctx.split.comm(lambda: chan.allreduce(st["hs"], st["hr"]))
    else:
        def exchange() -> None:
            st["recv"] = chan.allreduce(st["send"], st["recv"], st["hs"], st["hr"])
            ad.block(st["recv"])

        def step() -> None:
            ctx.split.comm(exchange)

    step()
    out = st["hr"] if path == "host" else ad.to_host(st["recv"])
    err = rel_err(out, expected)
    samples = ctx.timed(step)
    if ctx.rank:
        return None
    from gpubench.mpi.schema import bus_bandwidth

    res = result(samples, rel_err=err, tolerance=1e-6 * max(1, ctx.size))
    res["gbps"] = count * 4 / res["median_s"] / 1e9
    res["bus_gbps"] = bus_bandwidth(res["gbps"], ctx.size)
    return res


@mpi_job(order=0, size_meaning="n/a")
def job_device_selection(ctx: Context) -> dict[str, Any] | None:
    """Evaluate one strategy of the workshop book's §9.4 on every rank; the GPUs must all differ."""
    from gpubench.backends.cuda_common import nvml_uuid
    from gpubench.mpi import devices

    strategy = ctx.item["mode"]
    n_gpus = int(ctx.extra.get("n_gpus", 0))
    gpu = ctx.ad.device == "gpu"
    t0 = time.perf_counter()
    try:
        shared = ctx.comm.Split_type(ctx.mpi.COMM_TYPE_SHARED).Get_rank()
        env = dict(ctx.extra.get("launch_env") or os.environ)
        sel = devices.select(strategy, ctx.rank, n_gpus if gpu else (os.cpu_count() or 1),
                             env, shared_local_rank=shared)
        ident = nvml_uuid(sel.physical) if gpu else ""
        # an index names a device of one node only: host-qualified, ranks on different
        # nodes never share it, and the row shows each node's answer (node2:gpu0)
        ident = ident or (f"{socket.gethostname()}:gpu{sel.physical}" if gpu
                          else f"{socket.gethostname()}:cpu-slot{sel.physical}")
        err = ""
    except devices.DeviceSelectionError as exc:
        ident, err = "", str(exc)
    idents = ctx.comm.allgather(ident)
    errors = [e for e in ctx.comm.allgather(err) if e]
    dt = ctx.comm.allreduce(time.perf_counter() - t0, op=ctx.mpi.MAX)
    if ctx.rank:
        return None
    if errors:
        return {"status": "skipped", "reason": errors[0]}
    res = result([max(dt, 1e-9)], rel_err=0.0, tolerance=0.0)
    res["gpu_uuids"] = ";".join(idents) if gpu else ""
    shared_msg = devices.sharing_error(idents, False)
    if shared_msg:
        allowed = ctx.extra.get("oversubscribe", False)
        res.update(status="ok" if allowed else "error",
                   reason=("allowed by mpi.oversubscribe: " if allowed else "") + shared_msg)
        if allowed:
            res["reason"] = ""
    return res


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


@mpi_job(order=80, size_meaning="global elements", scaling="strong", single_process=True,
         needs="multi_device", defaults={"sizes": [1 << 20], "dtype": "float32"})
def job_multi_gpu(ctx: Context) -> dict[str, Any] | None:
    """The workshop book's §5.7, §7.6.4: one process drives ``ranks`` devices, each
    framework its own way (``mode``: CuPy device contexts, PyTorch ``cuda:<d>`` tensors,
    Numba CUDA contexts, a JAX sharded array under ``jit`` or ``shard_map`` with
    ``psum``); the same sum of squares as the reduction job, checked against float64."""
    n, dtype, mode = int(ctx.item["size"]), ctx.item["dtype"], ctx.item["mode"]
    ndev = int(ctx.item["devices"])
    rng = np.random.default_rng(np.random.SeedSequence([ctx.seed, 8]))
    host = rng.standard_normal(n).astype(dtype)
    ref = float(np.dot(host.astype(np.float64), host.astype(np.float64)))
    parts = [host[s:s + c] for s, c in (split(n, ndev, d) for d in range(ndev))]
    steps = ctx.ad.multi_device_steps()
    if mode not in steps:
        raise ValueError(f"unknown multi_gpu mode {mode!r}; known: {sorted(steps)}")
    step = steps[mode](ctx, parts)
    first = step()
    samples = one_process_samples(ctx, step)
    res = result(samples, rel_err=rel_err(first, ref), tolerance=tolerance(dtype, n))
    res["gbps"] = n * np.dtype(dtype).itemsize / res["median_s"] / 1e9
    return res


@mpi_job(order=85, size_meaning="message bytes", message=True, single_process=True,
         needs="peer_copy", min_ranks=2, dtype="uint8",
         defaults={"min_bytes": 1, "max_bytes": 1 << 20})
def job_peer_copy(ctx: Context) -> dict[str, Any] | None:
    """The link between two GPUs of one host, measured where the ranks run: one process
    copies a buffer from one GPU to another (``cudaMemcpyPeerAsync``, peer access
    enabled both ways, so the copy engines move it over NVLink where the GPUs have it),
    one direction per row (``mode`` ``0->1``, ``1->0``, ...). A sample is one copy on
    the caller's clock (host clock, stream synchronised), the clock the p2p ping-pong
    is timed on. The largest message's rate is the reference the device-buffer p2p and
    allreduce rows are compared with (``link_ref_gbps``), beside the datasheet's
    ``link_gbps``."""
    nbytes = int(ctx.item["size"])
    src, dst = (int(x) for x in str(ctx.item["mode"]).split("->"))
    pattern = ctx.common_rng(9).integers(0, 255, nbytes, dtype=np.uint8)
    copy, received, peer = ctx.ad.peer_copy_setup(src, dst, pattern)
    copy()
    same = received()
    samples = one_process_samples(ctx, copy)
    res = result(samples, rel_err=0.0 if same else 1.0, tolerance=0.0)
    res["latency_us"] = res["median_s"] * 1e6
    res["gbps"] = nbytes / res["median_s"] / 1e9
    if not same:
        res["reason"] = "the copy on the other GPU differs from the buffer sent"
    elif not peer:
        res.update(status="skipped", reason=f"GPUs {src} and {dst} cannot access each "
                   "other's memory (no peer access): the copy goes through host memory "
                   "and is no link reference")
    return res


#: each job's function, by name (its facts: :func:`gpubench.mpi.catalog_of_jobs`)
JOB_FUNCTIONS: dict[str, Callable[[Context], dict[str, Any] | None]] = {
    name: job.run for name, job in registered().items()}
