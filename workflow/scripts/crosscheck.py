"""Cross-check the harness against independent GPU timers on the same callables.

For kernels of 100 us or more, the harness's median must agree within 3% with
``triton.testing.do_bench`` (which flushes L2 before every run: compared with the
harness's cold mode) and with ``cupyx.profiler.benchmark`` (no flush: compared with
the hot mode). JAX's CUPTI kernel timings (hot mode) are compared with a host clock
around 50 calls dispatched back to back and waited for once, per call: that pipeline
hides JAX's dispatch cost but keeps the device's idle gaps between calls, so it may only
be slower than the kernels' sum. Run on a GPU machine:

    PYTHONPATH=src python3 workflow/scripts/crosscheck.py --out results/crosscheck.csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

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
        for kernel, variant, size, dtype in CASES:
            spec = get_kernel(kernel)
            case = Case(kernel, variant, size, dtype, dict(spec.default_params))
            impls = implementations(kernel, backend.framework, "gpu")
            impl = next((i for i in impls if "transfers" not in i.name), None)
            if impl is None:
                continue
            call, host_inputs = build_call(backend, spec, impl, case)
            ref = spec.reference(case, host_inputs)
            for mode in ("hot", "cold"):
                m = measure(spec, impl, case, backend, SETTINGS, host_inputs, ref, mode=mode)
                if m.fields["status"] != "ok":
                    print(f"{backend_id} {kernel}: {m.fields['status']} {m.fields['reason']}")
                    continue
                ours = m.fields["median_s"]
                tool, other = other_timer(backend, call, mode)
                if tool is None:
                    continue
                diff = 100.0 * (ours - other) / other
                agree = abs(diff) <= 3.0 if ours >= 100e-6 else "n/a (<100 us)"
                lines.append(f"{backend_id},{impl.name},{kernel},{variant},{size},{dtype},"
                             f"{mode},{ours:.6e},{tool},{other:.6e},{diff:.2f},{agree}")
                print(lines[-1], flush=True)
    atomic_write_text(args.out, "\n".join(lines) + "\n")
    bad = [line for line in lines[1:] if line.endswith(",False")]
    print(f"{len(lines) - 1} comparisons, {len(bad)} disagree by more than 3%")
    return 1 if bad else 0


def other_timer(backend, call, mode):
    """(tool name, median seconds) from an independent timer, or (None, nan)."""
    if backend.framework == "jax":
        # do_bench's events sit on PyTorch's stream, not on JAX's: no cold comparison.
        return ("host pipeline x50", jax_pipeline(backend, call)) if mode == "hot" \
            else (None, float("nan"))
    if mode == "cold":
        try:
            from triton.testing import do_bench
        except ImportError:
            return None, float("nan")
        # do_bench clears a 256 MB buffer before each run, like the cold mode.
        return "triton.do_bench", do_bench(call, warmup=100, rep=500,
                                           return_mode="median") / 1e3
    if backend.framework == "cupy":
        from cupyx.profiler import benchmark

        res = benchmark(call, n_repeat=200, n_warmup=10)
        return "cupyx.profiler.benchmark", float(np.median(res.gpu_times[0]))
    if backend.framework == "torch":
        import torch.utils.benchmark as tb

        timer = tb.Timer(stmt="call(); torch.cuda.synchronize()",
                         globals={"call": call, "torch": __import__("torch")})
        return "torch.utils.benchmark", timer.blocked_autorange(min_run_time=1.0).median
    return None, float("nan")


def jax_pipeline(backend, call, calls: int = 50, repeats: int = 10) -> float:
    """Median over repeats of (host time of ``calls`` back-to-back calls) / calls."""
    import time

    backend.block(call())
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            result = call()  # JAX keeps a dropped result alive until its kernel is done
        backend.block(result)
        times.append((time.perf_counter() - t0) / calls)
    return float(np.median(times))


if __name__ == "__main__":
    raise SystemExit(main())
