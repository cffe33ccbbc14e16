"""Two ranks hand CuPy device buffers straight to MPI and check what arrives.

A CUDA-aware library moves the bytes; one that is not crashes or returns garbage. Run
under the built Open MPI:  mpiexec -n 2 python3 sanity_direct.py
"""

import cupy as cp
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
n_dev = cp.cuda.runtime.getDeviceCount()
cp.cuda.Device(rank % n_dev).use()
n = 1 << 24
rng = cp.random.default_rng(1234)
x = rng.random(n, dtype=cp.float32)
if rank == 0:
    cp.cuda.runtime.deviceSynchronize()
    comm.Send(x, dest=1, tag=7)
else:
    y = cp.empty(n, dtype=cp.float32)
    comm.Recv(y, source=0, tag=7)
    ok = bool(cp.array_equal(y, x))  # same seed: rank 1 can rebuild what rank 0 sent
    print(f"rank 1 received {n * 4 >> 20} MiB into device memory: "
          f"{'identical' if ok else 'WRONG'}", flush=True)
s = cp.empty_like(x)
cp.cuda.runtime.deviceSynchronize()
comm.Allreduce(x, s, op=MPI.SUM)
ok = bool(cp.allclose(s, 2 * x))
aware = getattr(MPI, "Query_cuda_support", lambda: "n/a")()
print(f"rank {rank} on device {rank % n_dev}: Allreduce of device buffers "
      f"{'correct' if ok else 'WRONG'}; MPIX_Query_cuda_support={aware}; "
      f"{MPI.Get_library_version().splitlines()[0]}", flush=True)
