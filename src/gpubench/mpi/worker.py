"""One MPI rank of a job step: ``python -m gpubench.mpi.worker --spec S --out O``.

Order: MPI first (no framework yet), then the rank's GPU (the workshop book, §9.10.1:
select the device before the framework is imported), then the framework, then a check
that no two ranks share a GPU. Rank 0 appends one JSON line per event to ``--out``, flushed at
once, so whatever was measured survives a crash of a later item.

Failures follow the workshop book's §9.10.4: a failure in local work is agreed by every rank
(allgather of the reasons) and recorded as an ``error`` row, then the next item runs.
A rank that fails while the others may wait in a collective writes its reason to
``<out>.rank<N>.err`` and calls ``MPI.Abort``: the launcher ends every rank, and the
step records the reason. ``GPUBENCH_MPI_FAULT`` injects faults for the tests:
``raise_rank<N>`` (an agreed error), ``die_rank<N>`` (the rank exits at once),
``hang_rank<N>`` (the rank stops responding), each on the step's first item.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
import traceback
from pathlib import Path
from typing import Any


class SelfComm:
    """A one-process stand-in for MPI.COMM_WORLD (the single-process multi_gpu job)."""

    MAX = "max"
    SUM = "sum"
    COMM_TYPE_SHARED = 0

    def Get_rank(self) -> int:
        return 0

    def Get_size(self) -> int:
        return 1

    def allgather(self, value: Any) -> list[Any]:
        return [value]

    def allreduce(self, value: Any, op: Any = None) -> Any:
        return value

    def Barrier(self) -> None:
        return None

    @staticmethod
    def Wtime() -> float:
        return time.perf_counter()


def _emit_to(out: Path | None):
    def emit(event: str, **fields: Any) -> None:
        if out is None:
            return
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"event": event, **fields}, default=float) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
    return emit


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--spec", required=True, help="JSON written by the step")
    p.add_argument("--out", required=True, help="JSON lines written by rank 0")
    p.add_argument("--no-mpi", action="store_true", help="one process, no MPI (multi_gpu)")
    args = p.parse_args(argv)
    spec = json.loads(Path(args.spec).read_text())
    job, backend = spec["job"], spec["backend"]
    fault = os.environ.get("GPUBENCH_MPI_FAULT", "")

    if args.no_mpi:
        mpi: Any = SelfComm()
        comm: Any = mpi
        # whatever lets the framework see several devices (JAX on the CPU: XLA flags)
        ndev = max(int(it.get("devices", 1)) for it in spec["items"]) if spec["items"] \
            else 1
        from gpubench.backends import backend_class, load_plugins

        load_plugins()
        backend_class(backend).multi.prepare_devices(ndev)
    else:
        from mpi4py import MPI

        mpi, comm = MPI, MPI.COMM_WORLD
    rank = comm.Get_rank()
    out = Path(args.out)
    emit = _emit_to(out if rank == 0 else None)

    from gpubench.backends import load_backend, load_plugins
    from gpubench.mpi import devices, launch
    from gpubench.mpi.jobs import JOB_FUNCTIONS, AgreedError, Context, Settings

    load_plugins()  # out-of-tree backends and implementations (GPUBENCH_PLUGINS)
    adapter = load_backend(backend)
    gpu = adapter.device == "gpu"
    kind, err, versions, selection = "unavailable", "", {}, None
    try:
        shared = None if args.no_mpi else comm.Split_type(mpi.COMM_TYPE_SHARED).Get_rank()
        if gpu and job != "device_selection" and not args.no_mpi:
            kind = "error"
            selection = devices.select(spec["strategy"], rank, int(spec.get("n_gpus", 0)),
                                       os.environ, shared_local_rank=shared)
            if selection.visible is not None:
                os.environ["CUDA_VISIBLE_DEVICES"] = selection.visible
            kind = "unavailable"
        if job != "device_selection":
            # the step capped every thread pool at cores / ranks (OMP_NUM_THREADS)
            threads = int(os.environ.get("OMP_NUM_THREADS", "") or os.cpu_count() or 1)
            versions = adapter.start_rank(selection, threads)
    except Exception as exc:  # noqa: BLE001 - every rank reports, rank 0 records
        err = f"rank {rank}: {type(exc).__name__}: {exc}"[:500]
    errors = [e for e in comm.allgather(err) if e]
    kinds = comm.allgather(kind if err else "")
    if errors:
        emit("unavailable" if "error" not in kinds else "fatal", reason="; ".join(errors))
        return 0

    uuids = comm.allgather(adapter.uuid() if job != "device_selection" else "")
    hosts = comm.allgather(socket.gethostname())
    if args.no_mpi:
        library, version = "none (one process)", ""
        aware = (spec.get("cuda_aware", "unknown"), "")
    else:
        # Open MPI 4.1 ends its one-line version with the C string's NUL byte
        library = mpi.Get_library_version().strip("\x00 \n").splitlines()[0].strip()
        version = "{}.{}".format(*mpi.Get_version())
        aware = launch.cuda_aware_runtime(mpi, spec.get("cuda_aware", "unknown"))
    try:
        device_name = adapter.device_name() if job != "device_selection" else ""
    except Exception:  # noqa: BLE001 - a name is provenance, not a reason to fail
        device_name = ""
    emit("hello", versions=versions, uuids=uuids, hosts=hosts, mpi_library=library,
         mpi_version=version, cuda_aware=aware[0], cuda_aware_how=aware[1] or
         spec.get("cuda_aware_how", ""), device_name=device_name,
         strategy=selection.strategy if selection else "",
         pid=os.getpid())
    sharing = devices.sharing_error(uuids, bool(spec.get("oversubscribe"))) if gpu else ""
    if sharing:
        emit("fatal", reason=sharing)
        return 0

    settings = Settings.mpi(**(spec.get("settings") or {}))
    for item in spec["items"]:
        index = int(item["index"])
        emit("start", index=index)
        if index == 0 and fault == f"die_rank{rank}":
            print(f"rank {rank}: injected fault: exiting", file=sys.stderr, flush=True)
            os._exit(7)
        if index == 0 and fault == f"hang_rank{rank}":
            print(f"rank {rank}: injected fault: hanging", file=sys.stderr, flush=True)
            time.sleep(10**6)
        if item["path"] == "direct" and item.get("mode") != "nccl" and aware[0] != "yes":
            emit("result", index=index, samples=[], fields={
                "status": "skipped", "reason": f"the MPI library is not known to be "
                f"CUDA-aware ({aware[0]}): device buffers cannot be passed directly"})
            continue
        ctx = Context(comm, mpi, adapter, item, settings, int(spec.get("seed", 0)),
                      index=index, fault=fault,
                      extra={"n_gpus": spec.get("n_gpus", 0),
                             "oversubscribe": spec.get("oversubscribe", False)})
        try:
            fields = JOB_FUNCTIONS[job](ctx)
        except AgreedError as exc:
            fields = {"status": "error", "reason": str(exc)[:500]}
        except Exception as exc:  # noqa: BLE001 - the other ranks may wait in a collective
            text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            reason = f"rank {rank}: {text}"[:500]
            Path(f"{out}.rank{rank}.err").write_text(reason + "\n")
            print(reason, file=sys.stderr, flush=True)
            traceback.print_exc()
            sys.stderr.flush()
            if args.no_mpi:
                emit("result", index=index, samples=[],
                     fields={"status": "error", "reason": reason})
                continue
            comm.Abort(1)
        if rank == 0 and fields is not None:
            fields = {**ctx.split_fields, **fields}  # compute / communication split
            samples = [float(s) for s in fields.pop("_samples", [])]
            emit("result", index=index, fields=fields, samples=samples)
    if not args.no_mpi:
        comm.Barrier()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
