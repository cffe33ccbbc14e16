"""Cross-check the harness against independent GPU timers on the same callables.

For kernels of 100 us or more, the harness's median must agree within 3% with an
independent timer of the same quantity: ``triton.testing.do_bench`` for the cold mode
(it flushes L2 before every run and, like the harness, keeps the GPU busy while the
call is launched), and the device's own kernel timestamps for the hot mode, read by
CUPTI through PyTorch's profiler (Kineto) for CuPy, PyTorch and JAX alike. Timers that
include the launch from Python (``cupyx.profiler.benchmark``, ``torch.utils.benchmark``)
measure something else: 1-6% more on these kernels on an H100 (evidence/independent-timers).
Run on a GPU machine:

    PYTHONPATH=src python3 workflow/scripts/crosscheck.py --out results/crosscheck.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from gpubench.backends import load_backend
from gpubench.harness import Settings, measure
from gpubench.results import atomic_write_text
from gpubench.spec import BuildContext, Case, get_kernel, implementations

CASES = [
    ("vector_add", "default", 1 << 26, "float32"),
    ("vector_add", "default", 1 << 28, "float32"),
    ("elementwise", "hypot", 1 << 26, "float32"),
    ("reduction", "dot", 1 << 27, "float32"),
    ("matmul", "default", 4096, "float32"),
    ("matmul", "default", 8192, "float64"),
]
SETTINGS = Settings(warmup=5, min_samples=20, max_samples=2000, target_rel_spread=0.01,
                    max_time_s=2.0)


def build_call(backend, spec, impl, case):
    """The same callable the harness times, built outside it for the other timers."""
    inputs = spec.make_inputs(case, np.random.default_rng(case.seed(SETTINGS.seed)))
    dev = {k: backend.to_device(v) for k, v in inputs.items()}
    outs = {k: backend.empty(shape, dt) for k, (shape, dt) in spec.outputs(case).items()}
    ctx = BuildContext(case, backend, dev, {k: v for k, v in outs.items() if v is not None},
                       case.seed(SETTINGS.seed), inputs)
    return impl.builder(ctx), inputs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--backends", nargs="+", default=["torch-gpu", "cupy-gpu", "jax-gpu"])
    args = parser.parse_args(argv)
    lines = ["backend,implementation,kernel,variant,size,dtype,mode,harness_s,other_tool,"
             "other_s,diff_pct,agree"]
    for backend_id in args.backends:
        backend = load_backend(backend_id)
        try:
            backend.start(1)
        except Exception as exc:  # noqa: BLE001 - report and go on with the next backend
            print(f"{backend_id}: unavailable: {exc}")
            continue
        # Every harness measurement first, then the other timers: PyTorch's profiler
        # keeps CUPTI subscribed after it stops, and JAX's timer needs CUPTI to itself.
        measured = []
        for kernel, variant, size, dtype in CASES:
            spec = get_kernel(kernel)
            case = Case(kernel, variant, size, dtype, dict(spec.default_params))
            impls = implementations(kernel, backend.framework, "gpu")
            impl = next((i for i in impls if "transfers" not in i.name), None)
            if impl is None:
                continue
            call, host_inputs = build_call(backend, spec, impl, case)
            ref = spec.reference(case, host_inputs)
            # JAX: no cold comparison (do_bench's events are on PyTorch's stream)
            for mode in ("hot",) if backend.framework == "jax" else ("hot", "cold"):
                m = measure(spec, impl, case, backend, SETTINGS, host_inputs, ref, mode=mode)
                if m.fields["status"] != "ok":
                    print(f"{backend_id} {kernel}: {m.fields['status']} {m.fields['reason']}")
                    continue
                label = f"{backend_id},{impl.name},{kernel},{variant},{size},{dtype},{mode}"
                measured.append((label, call, mode, m.fields["median_s"]))
        for label, call, mode, ours in measured:
            tool, other = other_timer(backend, call, mode)
            if tool is None:
                continue
            diff = 100.0 * (ours - other) / other
            agree = abs(diff) <= 3.0 if ours >= 100e-6 else "n/a (<100 us)"
            lines.append(f"{label},{ours:.6e},{tool},{other:.6e},{diff:.2f},{agree}")
            print(lines[-1], flush=True)
    atomic_write_text(args.out, "\n".join(lines) + "\n")
    bad = [line for line in lines[1:] if line.endswith(",False")]
    print(f"{len(lines) - 1} comparisons, {len(bad)} disagree by more than 3%")
    return 1 if bad else 0


def other_timer(backend, call, mode):
    """(tool name, median seconds) from an independent timer, or (None, nan)."""
    if mode == "cold":  # never asked for JAX (main): do_bench's events are PyTorch's
        try:
            from triton.testing import do_bench
        except ImportError:
            return None, float("nan")
        # do_bench clears a 256 MB buffer before each run, like the cold mode.
        return "triton.do_bench", do_bench(call, warmup=100, rep=500,
                                           return_mode="median") / 1e3
    try:
        per_call = kineto_per_call(backend, call, span=backend.framework != "jax")
    except ImportError:
        return None, float("nan")
    return "CUPTI via torch.profiler", per_call


def kineto_per_call(backend, call, calls: int = 20, span: bool = True) -> float:
    """Median device time per call from CUPTI activity records, read by PyTorch's
    profiler (Kineto), over ``calls`` back-to-back calls.

    An independent reader of the device's own kernel timestamps, for any framework in
    the process: with ``span`` a call's time runs from its first kernel's start to its
    last kernel's end (what CUDA events around it measure, launch hidden), without it
    it is the sum of its kernels' durations (JAX's ``cupti_kernels`` timer). As many
    calls as the harness's samples, so a GEMM runs for as long and as hot as there.
    """
    import json
    import tempfile

    from torch.profiler import ProfilerActivity, profile

    if hasattr(backend, "detach_cupti"):
        backend.detach_cupti()  # one CUPTI subscriber at a time: JAX's hooks let go
    for _ in range(3):
        backend.block(call())
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            result = call()
        backend.block(result)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(path))
        trace = json.loads(path.read_text())
    events = sorted((float(e["ts"]), float(e["dur"])) for e in trace.get("traceEvents", [])
                    if e.get("ph") == "X" and e.get("cat") in DEVICE_CATEGORIES)
    if not events or len(events) % calls:
        raise RuntimeError(f"CUPTI saw {len(events)} device activities in {calls} calls, "
                           "not the same number per call")
    per = len(events) // calls
    times = []
    for c in range(calls):
        group = events[c * per:(c + 1) * per]
        if span:
            times.append(max(t + d for t, d in group) - group[0][0])
        else:
            times.append(sum(d for _, d in group))
    return float(np.median(times)) / 1e6  # trace times are microseconds


#: Kineto's trace categories of device work (kernels, copies, memsets)
DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")


if __name__ == "__main__":
    raise SystemExit(main())
