"""One adapter per framework, so each MPI job is written once.

An adapter places arrays on its rank's device, copies them to and from the host,
waits for the device, exposes device buffers to MPI (``direct``) and runs the local
computation of each job in the framework's own style (seed 9.6-9.9): CuPy array ops
(cuBLAS), Numba ``@cuda.jit`` kernels, CUDA C compiled by NVRTC and launched through
``cuda.core`` (CUDA Python), ``jax.jit``/``jax.grad`` (JAX), NumPy on CPU ranks.

The framework is imported in :meth:`Adapter.start`, after the device was chosen (a
``CUDA_VISIBLE_DEVICES`` strategy must act before the import).
"""

from __future__ import annotations

import importlib.metadata
import math
from typing import Any

import numpy as np

from gpubench.mpi.devices import Selection, nvml_uuid

#: Monte Carlo draws per chunk (bounds the memory of the array-based frameworks)
MC_CHUNK = 1 << 22


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


class Adapter:
    """NumPy on a CPU rank: the reference behaviour every adapter follows."""

    framework = "numpy"
    device = "cpu"
    #: device buffers may be handed to MPI (needs a CUDA-aware library as well)
    direct_capable = False
    #: buffers live in host memory already (CPU ranks): the path is "host"
    host_memory = True

    def start(self, selection: Selection | None) -> dict[str, str]:
        self.selection = selection
        return {"numpy": np.__version__}

    def device_name(self) -> str:
        from gpubench.provenance import cpu_model

        return cpu_model()

    def uuid(self) -> str:
        """The GPU's UUID ('' on CPU ranks)."""
        return ""

    # -- memory ------------------------------------------------------------------------
    def asarray(self, host: np.ndarray) -> Any:
        return np.array(host, copy=True)

    def to_host(self, value: Any) -> np.ndarray:
        return np.asarray(value)

    def empty(self, shape: tuple[int, ...] | int, dtype: str) -> Any:
        return np.empty(shape, dtype=dtype)

    def sync(self, value: Any = None) -> None:
        """Wait until the device has finished (nothing to wait for on the CPU)."""

    def view(self, arr: Any, start: int, stop: int) -> Any:
        """A 1-D slice that MPI can read or write in place."""
        return arr[start:stop]

    def copy_to_host(self, src: Any, host: np.ndarray) -> None:
        host[...] = src

    def copy_from_host(self, host: np.ndarray, dst: Any) -> Any:
        """Write ``host`` into ``dst``; return the array now holding it (JAX: a new one)."""
        dst[...] = host
        return dst

    # -- the jobs' computations ---------------------------------------------------------
    def sumsq(self, arr: Any) -> float:
        return float(np.dot(arr, arr))

    def matmul(self, a: Any, b: Any) -> Any:
        return a @ b

    def stencil(self, u: Any, out: Any, alpha: float) -> Any:
        """One explicit heat-equation step of the interior; returns the new state."""
        out[1:-1] = u[1:-1] + alpha * (u[:-2] - 2 * u[1:-1] + u[2:])
        return out

    def set_ghosts(self, u: Any, left: np.ndarray, right: np.ndarray) -> Any:
        u[0] = left[0]
        u[-1] = right[0]
        return u

    def edges_to_host(self, u: Any, n: int, last: np.ndarray, first: np.ndarray) -> None:
        """The last and the first interior cell of a halo slab of n cells (plus a ghost
        cell each side) into host buffers."""
        self.copy_to_host(self.view(u, n, n + 1), last)
        self.copy_to_host(self.view(u, 1, 2), first)

    def mc_hits(self, n: int, seed: int, stream: int) -> int:
        """Points of n uniform draws inside the quarter circle; ``stream`` (the rank)
        picks an independent Philox stream of the same seed."""
        rng = np.random.Generator(np.random.Philox(key=seed, counter=[0, 0, 0, stream]))
        hits = 0
        for start in range(0, n, MC_CHUNK):
            m = min(MC_CHUNK, n - start)
            xy = rng.random((2, m))
            hits += int(np.count_nonzero(xy[0] * xy[0] + xy[1] * xy[1] <= 1.0))
        return hits

    def linear_grad(self, p: Any, x: Any, y: Any) -> Any:
        """Gradient of sum((x W^T + b - y)^2) for the flat parameters p = [W (O*F), b (O)],
        flattened the same way (seed 9.8.2's linear model)."""
        outs, feats = y.shape[1], x.shape[1]
        w, b = p[:outs * feats].reshape(outs, feats), p[outs * feats:]
        r = x @ w.T + b - y
        return np.concatenate([(2 * (r.T @ x)).ravel(), 2 * r.sum(axis=0)])

    def axpy(self, p: Any, g: Any, scale: float) -> Any:
        """p - scale * g (the parameter update); returns the new array."""
        return p - scale * g


class CupyAdapter(Adapter):
    """CuPy: array ops on the rank's device (cuBLAS matmul), CUDA-array-interface buffers."""

    framework = "cupy"
    device = "gpu"
    direct_capable = True
    host_memory = False

    def start(self, selection: Selection | None) -> dict[str, str]:
        import cupy

        self.selection = selection
        self.cp = cupy
        index = selection.index if selection else 0
        cupy.cuda.Device(index).use()
        self.dev = cupy.cuda.Device(index)
        cupy.zeros(1).sum()  # create the context now, not inside a timed region
        cupy.cuda.get_current_stream().synchronize()
        return {"cupy": cupy.__version__,
                "cuda_runtime": str(cupy.cuda.runtime.runtimeGetVersion())}

    def device_name(self) -> str:
        name = self.cp.cuda.runtime.getDeviceProperties(self.dev.id)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    def uuid(self) -> str:
        props = self.cp.cuda.runtime.getDeviceProperties(self.dev.id)
        raw = props.get("uuid")
        if isinstance(raw, bytes | bytearray) and len(raw) == 16:
            h = raw.hex()
            return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        return nvml_uuid(self.selection.physical) if self.selection else ""

    def asarray(self, host: np.ndarray) -> Any:
        out = self.cp.asarray(np.ascontiguousarray(host))
        self.sync()
        return out

    def to_host(self, value: Any) -> np.ndarray:
        return self.cp.asnumpy(value) if isinstance(value, self.cp.ndarray) else np.asarray(value)

    def empty(self, shape: tuple[int, ...] | int, dtype: str) -> Any:
        return self.cp.empty(shape, dtype=dtype)

    def sync(self, value: Any = None) -> None:
        self.cp.cuda.get_current_stream().synchronize()

    def copy_to_host(self, src: Any, host: np.ndarray) -> None:
        src.get(out=host)

    def copy_from_host(self, host: np.ndarray, dst: Any) -> Any:
        dst.set(host)
        return dst

    def sumsq(self, arr: Any) -> float:
        return float(self.cp.vdot(arr, arr).get())  # .get() waits for the device

    def set_ghosts(self, u: Any, left: np.ndarray, right: np.ndarray) -> Any:
        u[0:1].set(left)
        u[-1:].set(right)
        return u

    def mc_hits(self, n: int, seed: int, stream: int) -> int:
        # cuRAND Philox4x32-10 with a per-rank subsequence would need the device API;
        # CuPy's Generator takes a seed: derive one per rank through SeedSequence
        # (hashed, so ranks never get neighbouring seeds as in seed 9.7.2).
        child = np.random.SeedSequence(seed).spawn(stream + 1)[stream]
        rng = self.cp.random.default_rng(int(child.generate_state(1, np.uint64)[0]))
        hits = self.cp.zeros((), dtype=self.cp.int64)
        for start in range(0, n, MC_CHUNK):
            m = min(MC_CHUNK, n - start)
            x = rng.random(m)
            y = rng.random(m)
            hits += self.cp.count_nonzero(x * x + y * y <= 1.0)
        return int(hits.get())

    def linear_grad(self, p: Any, x: Any, y: Any) -> Any:
        outs, feats = y.shape[1], x.shape[1]
        w, b = p[:outs * feats].reshape(outs, feats), p[outs * feats:]
        r = x @ w.T + b - y
        return self.cp.concatenate([(2 * (r.T @ x)).ravel(), 2 * r.sum(axis=0)])


#: ``numba.cuda`` once imported; kernels reach it as a module global (the simulator
#: swaps exactly such globals, see gpubench.backends.numba_gpu)
cuda: Any = None
#: ``numba.cuda.random.xoroshiro128p_uniform_float64``, a module global for the same reason
xoroshiro128p_uniform_float64: Any = None


def _numba_kernels() -> dict[str, Any]:
    from gpubench.backends.numba_gpu import import_cuda, threads_per_block

    global cuda, xoroshiro128p_uniform_float64
    cuda = import_cuda()
    from numba.cuda.random import xoroshiro128p_uniform_float64
    threads = threads_per_block()
    float64 = cuda.float64

    @cuda.jit
    def sumsq_partials(a, partials):
        sm = cuda.shared.array(threads, float64)
        tid = cuda.threadIdx.x
        acc = 0.0
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            acc += a[i] * a[i]
        sm[tid] = acc
        cuda.syncthreads()
        step = threads // 2
        while step > 0:
            if tid < step:
                sm[tid] += sm[tid + step]
            cuda.syncthreads()
            step //= 2
        if tid == 0:
            partials[cuda.blockIdx.x] = sm[0]

    @cuda.jit
    def stencil(u, out, alpha):
        n = u.shape[0] - 2
        for i in range(cuda.grid(1) + 1, n + 1, cuda.gridsize(1)):
            out[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])

    @cuda.jit
    def matmul(a, b, c):
        row, col = cuda.grid(2)
        if row < c.shape[0] and col < c.shape[1]:
            acc = 0.0
            for k in range(a.shape[1]):
                acc += a[row, k] * b[k, col]
            c[row, col] = acc

    @cuda.jit
    def mc(states, per_thread, n, hits):
        tid = cuda.grid(1)
        if tid >= hits.shape[0]:
            return
        count = 0
        start = tid * per_thread
        for j in range(per_thread):
            if start + j < n:
                x = xoroshiro128p_uniform_float64(states, tid)
                y = xoroshiro128p_uniform_float64(states, tid)
                if x * x + y * y <= 1.0:
                    count += 1
        hits[tid] = count

    @cuda.jit
    def residual(x, y, w, b, r):
        for i in range(cuda.grid(1), r.shape[0] * r.shape[1], cuda.gridsize(1)):
            row = i // r.shape[1]
            o = i % r.shape[1]
            acc = b[o]
            for f in range(x.shape[1]):
                acc += x[row, f] * w[o, f]
            r[row, o] = acc - y[row, o]

    @cuda.jit
    def grad(x, r, g):
        nout = r.shape[1]
        nfeat = x.shape[1]
        for e in range(cuda.grid(1), nout * nfeat + nout, cuda.gridsize(1)):
            acc = 0.0
            if e < nout * nfeat:
                o = e // nfeat
                f = e % nfeat
                for row in range(x.shape[0]):
                    acc += r[row, o] * x[row, f]
            else:
                o = e - nout * nfeat
                for row in range(x.shape[0]):
                    acc += r[row, o]
            g[e] = 2.0 * acc

    @cuda.jit
    def copy_states(src, dst):  # xoroshiro128+ records, field by field
        for i in range(cuda.grid(1), src.shape[0], cuda.gridsize(1)):
            dst[i]["s0"] = src[i]["s0"]
            dst[i]["s1"] = src[i]["s1"]

    @cuda.jit
    def axpy(a, b, scale, out):
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            out[i] = a[i] - scale * b[i]

    return {"sumsq": sumsq_partials, "stencil": stencil, "matmul": matmul, "mc": mc,
            "residual": residual, "grad": grad, "axpy": axpy, "copy_states": copy_states}


class NumbaAdapter(Adapter):
    """Numba CUDA: ``@cuda.jit`` kernels on device arrays (never host arrays, KERNELS.md)."""

    framework = "numba"
    device = "gpu"
    direct_capable = True
    host_memory = False
    #: (threads, seed, rank) of the xoroshiro states made last (see _rng_states)
    _rng_key: tuple[int, int, int] | None = None

    def start(self, selection: Selection | None) -> dict[str, str]:
        from gpubench.backends.numba_gpu import apply_numpy_shim, import_cuda, is_simulator

        self.selection = selection
        self.cuda = import_cuda()
        if not is_simulator():
            self.cuda.select_device(selection.index if selection else 0)
        self.k = _numba_kernels()
        self.sim = is_simulator()
        return {"numba": _version("numba"), "numba-cuda": _version("numba-cuda"),
                "numpy_row_stack_shim": apply_numpy_shim(),
                **({"cudasim": "1"} if self.sim else {})}

    def device_name(self) -> str:
        if self.sim:
            return "Numba CUDA simulator"
        name = self.cuda.get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)

    def uuid(self) -> str:
        if self.sim:
            return ""
        uuid = getattr(self.cuda.get_current_device(), "uuid", "")
        return str(uuid) or (nvml_uuid(self.selection.physical) if self.selection else "")

    def _grid(self, n: int) -> tuple[int, int]:
        from gpubench.backends.numba_gpu import grid_1d

        return grid_1d(max(1, n))

    def asarray(self, host: np.ndarray) -> Any:
        out = self.cuda.to_device(np.ascontiguousarray(host))
        self.sync()
        return out

    def to_host(self, value: Any) -> np.ndarray:
        if hasattr(value, "copy_to_host"):
            return value.copy_to_host()
        return np.asarray(value)

    def empty(self, shape: tuple[int, ...] | int, dtype: str) -> Any:
        return self.cuda.device_array(shape, dtype=dtype)

    def sync(self, value: Any = None) -> None:
        self.cuda.synchronize()

    def copy_to_host(self, src: Any, host: np.ndarray) -> None:
        src.copy_to_host(host)

    def copy_from_host(self, host: np.ndarray, dst: Any) -> Any:
        dst.copy_to_device(host)
        return dst

    def sumsq(self, arr: Any) -> float:
        blocks, threads = self._grid(arr.shape[0])
        partials = self.cuda.device_array(blocks, dtype=np.float64)
        self.k["sumsq"][blocks, threads](arr, partials)
        return float(partials.copy_to_host().sum())

    def matmul(self, a: Any, b: Any) -> Any:
        c = self.cuda.device_array((a.shape[0], b.shape[1]), dtype=a.dtype)
        t = 8 if self.sim else 16
        grid = (math.ceil(max(1, a.shape[0]) / t), math.ceil(b.shape[1] / t))
        self.k["matmul"][grid, (t, t)](a, b, c)
        return c

    def stencil(self, u: Any, out: Any, alpha: float) -> Any:
        blocks, threads = self._grid(u.shape[0] - 2)
        self.k["stencil"][blocks, threads](u, out, alpha)
        return out

    def set_ghosts(self, u: Any, left: np.ndarray, right: np.ndarray) -> Any:
        u[0:1].copy_to_device(left)
        u[u.shape[0] - 1:].copy_to_device(right)
        return u

    def mc_hits(self, n: int, seed: int, stream: int) -> int:
        threads = 64 if self.sim else 65536
        per_thread = max(1, math.ceil(n / threads))
        threads = math.ceil(n / per_thread)
        states = self._rng_states(threads, seed, stream)
        hits = self.cuda.device_array(threads, dtype=np.int64)
        blocks, tpb = math.ceil(threads / 32), 32
        self.k["mc"][blocks, tpb](states, per_thread, n, hits)
        return int(hits.copy_to_host().sum())

    def _rng_states(self, threads: int, seed: int, stream: int) -> Any:
        """Fresh xoroshiro128+ states for one call, copied from ones made once.

        One seed for every rank; each rank's threads start at their own jump-ahead
        subsequences (2^64 draws apart), so no two threads of any rank overlap. Numba
        makes the states on the host, jumping ahead one subsequence at a time, so rank r
        pays for r x threads jumps: made per call, that put 4 ranks at 0.3x the speed of
        one on H200s. A simulation seeds its generator once; so does this job, and each
        call then starts from the same states (same draws, same check).
        """
        from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_dtype

        key = (threads, seed, stream)
        if self._rng_key != key:
            self._rng_pristine = create_xoroshiro128p_states(
                threads, seed=seed, subsequence_start=stream * threads)
            self._rng_work = self.cuda.device_array(threads, dtype=xoroshiro128p_dtype)
            self._rng_key = key
        blocks, tpb = self._grid(threads)
        self.k["copy_states"][blocks, tpb](self._rng_pristine, self._rng_work)
        return self._rng_work

    def linear_grad(self, p: Any, x: Any, y: Any) -> Any:
        outs, feats = y.shape[1], x.shape[1]
        w, b = p[:outs * feats].reshape(outs, feats), p[outs * feats:]
        r = self.cuda.device_array(y.shape, dtype=y.dtype)
        g = self.cuda.device_array(outs * feats + outs, dtype=y.dtype)
        blocks, threads = self._grid(y.shape[0] * y.shape[1])
        self.k["residual"][blocks, threads](x, y, w, b, r)
        blocks, threads = self._grid(g.shape[0])
        self.k["grad"][blocks, threads](x, r, g)
        return g

    def axpy(self, p: Any, g: Any, scale: float) -> Any:
        out = self.cuda.device_array(p.shape[0], dtype=p.dtype)
        blocks, threads = self._grid(p.shape[0])
        self.k["axpy"][blocks, threads](p, g, scale, out)
        return out


class _View:
    """A slice of a CUDA Python DeviceArray (same memory), readable by MPI through the
    CUDA array interface."""

    def __init__(self, base: Any, start: int, stop: int) -> None:
        self.base = base
        self.dtype = base.dtype
        self.shape = (stop - start,)
        self.ptr = base.ptr + start * base.dtype.itemsize

    @property
    def size(self) -> int:
        return self.shape[0]

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "strides": None, "version": 3}


class CudaPythonAdapter(Adapter):
    """CUDA Python: explicit driver-API memory, NVRTC kernels launched with cuda.core."""

    framework = "cuda_python"
    device = "gpu"
    direct_capable = True
    host_memory = False

    def start(self, selection: Selection | None) -> dict[str, str]:
        from gpubench.backends.cuda_python_gpu import CudaPythonGPU

        self.selection = selection
        be = CudaPythonGPU()
        be.device_index = selection.index if selection else 0
        versions = be.start(1)
        self.be = be
        from gpubench import cuda_sources
        from gpubench.mpi import KERNEL_SOURCE

        self.src = KERNEL_SOURCE.read_text()
        self.red = cuda_sources.source("reduction")
        self.mc = cuda_sources.source("monte_carlo_pi")
        return versions

    def device_name(self) -> str:
        return self.be.device_name()

    def uuid(self) -> str:
        uuid = str(getattr(self.be._dev, "uuid", "") or "")
        if uuid and not uuid.startswith("GPU-"):
            uuid = f"GPU-{uuid}"
        return uuid or (nvml_uuid(self.selection.physical) if self.selection else "")

    def _sfx(self, dtype: Any) -> str:
        return {"float32": "f32", "float64": "f64"}[np.dtype(dtype).name]

    def asarray(self, host: np.ndarray) -> Any:
        return self.be.to_device(np.ascontiguousarray(host))

    def to_host(self, value: Any) -> np.ndarray:
        if isinstance(value, _View):
            host = np.empty(value.shape, value.dtype)
            self.copy_to_host(value, host)
            return host
        return self.be.to_host(value)

    def empty(self, shape: tuple[int, ...] | int, dtype: str) -> Any:
        return self.be.empty((shape,) if isinstance(shape, int) else shape, dtype)

    def sync(self, value: Any = None) -> None:
        self.be.stream.sync()

    def view(self, arr: Any, start: int, stop: int) -> Any:
        return _View(arr, start, stop)

    def copy_to_host(self, src: Any, host: np.ndarray) -> None:
        from gpubench.backends.cuda_python_gpu import _check

        _check(self.be._driver.cuMemcpyDtoHAsync(host.ctypes.data, src.ptr, host.nbytes,
                                                 self.be.stream.handle))
        self.be.stream.sync()

    def copy_from_host(self, host: np.ndarray, dst: Any) -> Any:
        from gpubench.backends.cuda_python_gpu import _check

        _check(self.be._driver.cuMemcpyHtoDAsync(dst.ptr, host.ctypes.data, host.nbytes,
                                                 self.be.stream.handle))
        self.be.stream.sync()
        return dst

    def _launch1d(self, name: str, source: str, items: int, *args: Any) -> None:
        from gpubench.backends.cuda_python_gpu import THREADS

        kernel = self.be.kernel(source, name)
        self.be.launch(kernel, self.be.grid_for(kernel, max(1, items)), THREADS, *args)

    def sumsq(self, arr: Any) -> float:
        from gpubench.backends.cuda_python_gpu import THREADS
        from gpubench.kernels.reduction.with_cuda_python import work_items

        sfx = self._sfx(arr.dtype)
        k1 = self.be.kernel(self.red, f"reduction_sumsq_{sfx}")
        k2 = self.be.kernel(self.red, f"reduction_finalize_{sfx}")
        grid = self.be.grid_for(k1, work_items(arr.size, arr.dtype.name))
        partials = self.be.empty((2 * grid,), "float64")
        out = self.be.empty((), "float64" if sfx == "f64" else "float32")
        self.be.launch(k1, grid, THREADS, arr.ptr, partials.ptr, np.int64(arr.size))
        self.be.launch(k2, 1, THREADS, partials.ptr, np.int64(grid), out.ptr)
        return float(self.be.to_host(out))  # to_host waits on the stream

    def matmul(self, a: Any, b: Any) -> Any:
        m, k = a.shape
        n = b.shape[1]
        c = self.be.empty((m, n), a.dtype.name)
        kernel = self.be.kernel(self.src, f"mpi_matmul_{self._sfx(a.dtype)}")
        grid = (math.ceil(n / 16), math.ceil(max(1, m) / 16))
        self.be.launch(kernel, grid, (16, 16), a.ptr, b.ptr, c.ptr, np.int64(m),
                       np.int64(n), np.int64(k))
        return c

    def stencil(self, u: Any, out: Any, alpha: float) -> Any:
        n = u.size - 2
        scalar = np.dtype(u.dtype).type(alpha)
        self._launch1d(f"mpi_stencil_{self._sfx(u.dtype)}", self.src, n, u.ptr, out.ptr,
                       np.int64(n), scalar)
        return out

    def set_ghosts(self, u: Any, left: np.ndarray, right: np.ndarray) -> Any:
        self.copy_from_host(left, _View(u, 0, 1))
        self.copy_from_host(right, _View(u, u.size - 1, u.size))
        return u

    def mc_hits(self, n: int, seed: int, stream: int) -> int:
        from gpubench.backends.cuda_python_gpu import THREADS

        # monte_carlo_pi.cu draws block j of call c from Philox(counter=(j, c), key=seed):
        # each rank takes its own call numbers (rank << 32 | i), so no two ranks, calls
        # or threads share a counter: independent streams by construction.
        count = self.be.kernel(self.mc, "monte_carlo_pi_f64")
        hits = self.be.empty((1,), "uint64")
        self.be.zero(hits)
        self.be.launch(count, self.be.grid_for(count, n), THREADS, np.uint64(seed),
                       np.uint64(stream << 32), np.int64(n), hits.ptr)
        return int(self.be.to_host(hits)[0])

    def linear_grad(self, p: Any, x: Any, y: Any) -> Any:
        rows, feats = x.shape
        outs = y.shape[1]
        sfx = self._sfx(x.dtype)
        b_ptr = p.ptr + outs * feats * p.dtype.itemsize
        r = self.be.empty((rows, outs), x.dtype.name)
        g = self.be.empty((outs * feats + outs,), x.dtype.name)
        self._launch1d(f"mpi_residual_{sfx}", self.src, rows * outs, x.ptr, y.ptr, p.ptr,
                       b_ptr, r.ptr, np.int64(rows), np.int64(feats), np.int64(outs))
        self._launch1d(f"mpi_grad_{sfx}", self.src, g.size, x.ptr, r.ptr, g.ptr,
                       np.int64(rows), np.int64(feats), np.int64(outs))
        return g

    def axpy(self, p: Any, g: Any, scale: float) -> Any:
        out = self.be.empty((p.size,), p.dtype.name)
        self._launch1d(f"mpi_axpy_{self._sfx(p.dtype)}", self.src, p.size, p.ptr, g.ptr,
                       out.ptr, np.int64(p.size), np.dtype(p.dtype).type(scale))
        return out


class JaxAdapter(Adapter):
    """JAX: jitted functions on the rank's device. Arrays are immutable and MPI cannot
    receive into them, so communication is always staged through host buffers."""

    framework = "jax"
    platform = "gpu"
    device = "gpu"
    direct_capable = False
    host_memory = False

    def start(self, selection: Selection | None) -> dict[str, str]:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        self.selection = selection
        devices = jax.devices(self.platform)
        self.dev = devices[selection.index if selection else 0]
        jax.config.update("jax_default_device", self.dev)
        self.jax, self.jnp = jax, jnp
        hi = jax.lax.Precision.HIGHEST
        self._sumsq = jax.jit(lambda a: jnp.vdot(a, a))
        self._matmul = jax.jit(lambda a, b: jnp.matmul(a, b, precision=hi))
        self._stencil = jax.jit(lambda u, alpha: u.at[1:-1].set(
            u[1:-1] + alpha * (u[:-2] - 2 * u[1:-1] + u[2:])))
        # The state is donated: XLA writes the two ghost cells in place instead of
        # copying all of it (512 MiB a step at 2**26 float64 cells).
        self._ghosts = jax.jit(lambda u, lft, rgt: u.at[0].set(lft[0]).at[-1].set(rgt[0]),
                               donate_argnums=(0,) if self.platform == "gpu" else ())
        self._edges = jax.jit(lambda u: jnp.stack([u[-2], u[1]]))

        def loss(p, x, y):
            outs, feats = y.shape[1], x.shape[1]
            w, b = p[:outs * feats].reshape(outs, feats), p[outs * feats:]
            r = jnp.matmul(x, w.T, precision=hi) + b - y
            return jnp.sum(r * r)

        self._grad = jax.jit(jax.grad(loss))
        self._axpy = jax.jit(lambda p, g, s: p - s * g)

        def hits(key, m):
            xy = jax.random.uniform(key, (2, m), dtype=jnp.float64)
            return jnp.count_nonzero(xy[0] * xy[0] + xy[1] * xy[1] <= 1.0)

        self._hits = jax.jit(hits, static_argnums=1)
        import jaxlib

        return {"jax": jax.__version__, "jaxlib": jaxlib.__version__}

    def device_name(self) -> str:
        if self.platform == "cpu":
            return super().device_name()
        return str(getattr(self.dev, "device_kind", self.dev))

    def uuid(self) -> str:
        if self.platform == "cpu" or not self.selection:
            return ""
        return nvml_uuid(self.selection.physical)

    def asarray(self, host: np.ndarray) -> Any:
        return self.jax.device_put(np.ascontiguousarray(host), self.dev).block_until_ready()

    def empty(self, shape: tuple[int, ...] | int, dtype: str) -> Any:
        return self.jnp.zeros(shape, dtype=dtype)

    def sync(self, value: Any = None) -> None:
        if value is not None:
            self.jax.block_until_ready(value)

    def copy_to_host(self, src: Any, host: np.ndarray) -> None:
        host[...] = np.asarray(src)

    def copy_from_host(self, host: np.ndarray, dst: Any) -> Any:
        return self.asarray(host.reshape(dst.shape).astype(dst.dtype))

    def sumsq(self, arr: Any) -> float:
        return float(self._sumsq(arr))

    def matmul(self, a: Any, b: Any) -> Any:
        return self._matmul(a, b)

    def stencil(self, u: Any, out: Any, alpha: float) -> Any:
        return self._stencil(u, alpha)

    def set_ghosts(self, u: Any, left: np.ndarray, right: np.ndarray) -> Any:
        return self._ghosts(u, left, right)

    def edges_to_host(self, u: Any, n: int, last: np.ndarray, first: np.ndarray) -> None:
        """Both edge cells in one dispatch and one transfer (two slices cost two)."""
        last[0], first[0] = np.asarray(self._edges(u))

    def mc_hits(self, n: int, seed: int, stream: int) -> int:
        # Explicit keys: one per rank by fold_in, one per chunk by fold_in again.
        key = self.jax.random.fold_in(self.jax.random.PRNGKey(seed), stream)
        total = 0
        for i, start in enumerate(range(0, n, MC_CHUNK)):
            m = min(MC_CHUNK, n - start)
            total += int(self._hits(self.jax.random.fold_in(key, i), m))
        return total

    def linear_grad(self, p: Any, x: Any, y: Any) -> Any:
        return self._grad(p, x, y)

    def axpy(self, p: Any, g: Any, scale: float) -> Any:
        return self._axpy(p, g, scale)


class JaxCpuAdapter(JaxAdapter):
    platform = "cpu"
    device = "cpu"


ADAPTERS: dict[str, type[Adapter]] = {
    "numpy-cpu": Adapter,
    "jax-cpu": JaxCpuAdapter,
    "cupy-gpu": CupyAdapter,
    "numba-gpu": NumbaAdapter,
    "jax-gpu": JaxAdapter,
    "cuda_python-gpu": CudaPythonAdapter,
}

#: the module each backend's ranks import (checked before launching)
FRAMEWORK_MODULES: dict[str, str] = {
    "numpy-cpu": "numpy", "jax-cpu": "jax", "cupy-gpu": "cupy", "numba-gpu": "numba.cuda",
    "jax-gpu": "jax", "cuda_python-gpu": "cuda.core",
}
