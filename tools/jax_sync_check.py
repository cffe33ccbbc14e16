"""JAX's sync caller clock against an independent ``block_until_ready`` loop, in one process.

For JAX ``vector_add`` float32 at each size, in alternating rounds:

* the harness: ``gpubench.harness.measure`` as a benchmark step runs it (first call,
  check, warm-up, device samples, then :func:`gpubench.harness.caller_clocks`), with the
  step's settings from ``config/config.yaml`` (``harness`` merged with ``gpu_harness``);
  its row's ``sync_median_s`` is the sync caller clock;
* a plain loop on the same device arrays, written as a JAX user would::

      t0 = perf_counter(); y = f(a, b); y.block_until_ready(); t = perf_counter() - t0

  with ``f = jax.jit(lambda a, b: a + b)`` (compiled and warmed first), many repetitions,
  the median.

Prints both per size (the median over rounds of each round's median) and the median of
the rounds' paired ratios (each harness round over the plain round beside it: the host's
speed moves in regimes of seconds, which a pair shares and three medians apart do not),
and exits 1 if that ratio lies outside 0.9-1.1 (2 on a setup error).

    python tools/jax_sync_check.py                   # the GPU (jax-gpu)
    JAX_PLATFORMS=cpu python tools/jax_sync_check.py --platform cpu

``--platform cpu`` runs the same code path on JAX's CPU device (the GPU backend's class
on the CPU platform: the same caller clock and wait), to test the script without a GPU.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SIZES = (1 << 10, 1 << 16, 1 << 20, 1 << 24)
LOW, HIGH = 0.9, 1.1


def settings_from_config(path: Path) -> Any:
    """The GPU steps' harness settings: ``harness`` merged with ``gpu_harness``."""
    import yaml

    from gpubench.harness import Settings

    # read as written (no schema check: the GPU machine may lack jsonschema)
    config = yaml.safe_load(path.read_text())
    harness = {**config.get("harness", {}), **config.get("gpu_harness", {})}
    return Settings(**{k: v for k, v in harness.items() if k in Settings.__dataclass_fields__})


def start_backend(platform: str, threads: int) -> Any:
    """jax-gpu; on the CPU platform the same class (its caller clock and wait) on JAX's
    CPU device."""
    from gpubench.backends.jax.adapter import JaxGPU

    if platform == "gpu":
        backend = JaxGPU()
    else:
        class JaxGPUOnCPU(JaxGPU):
            platform = "cpu"

        backend = JaxGPUOnCPU()
    versions = backend.start(threads)
    return backend, versions


def harness_sync(backend: Any, size: int, settings: Any,
                 spread_s: float = 0.0) -> tuple[float, float, str]:
    """(sync median, pipelined median, status) of one harness measurement: the row a
    step writes, its spread rounds included where ``spread_s`` > 0 and the row is one a
    step keeps for them (24 rounds over ``spread_s`` seconds for this one row, where a
    step spreads all its kept rows over ``caller_spread_s``: the same samples per row)."""
    from dataclasses import replace

    from gpubench.harness import measure
    from gpubench.spec import get_kernel, implementations
    from gpubench.spread import Spread
    from gpubench.worker import spread_result

    spec = get_kernel("vector_add")
    impl = next(i for i in implementations("vector_add", "jax", "gpu") if i.name == "jit")
    case = spec.cases([size], ["float32"])[0]
    inputs = spec.make_inputs(case, np.random.default_rng(case.seed(settings.seed)))
    m = measure(spec, impl, case, backend, settings, inputs, spec.reference(case, inputs))
    f = m.fields
    TRACE["harness"] = list(m.caller.get("sync", []))
    if f.get("status") != "ok":
        return float("nan"), float("nan"), f"{f.get('status')}: {f.get('reason')}"
    if spread_s > 0:
        spread = Spread(backend, replace(settings, caller_spread_s=spread_s))
        if spread.keep(0, m.call, f, m.caller.get("pipelined") or [], "hot",
                       int(f.get("bytes") or 0), m.caller.get("sync"), m.context):
            ended: list[Any] = []
            spread.run(ended.append)
            f = {**f, **spread_result(ended[0], f)[0]}
    return float(f["sync_median_s"]), float(f["pipelined_median_s"]), "ok"


#: the last harness measurement's sync samples and plain loop's times, in order (--trace)
TRACE: dict[str, list[float]] = {}


def plain_loop(backend: Any, size: int, reps: int) -> float:
    """Median seconds of ``f(a, b)`` then ``y.block_until_ready()`` on the host clock."""
    import jax

    rng = np.random.default_rng(size)
    a = jax.device_put(rng.random(size, dtype=np.float32), backend._device)
    b = jax.device_put(rng.random(size, dtype=np.float32), backend._device)
    a.block_until_ready()
    b.block_until_ready()
    times = time_loop(jax.jit(lambda x, y: x + y), (a, b), reps)
    TRACE["plain"] = times
    return float(np.median(times))


def time_loop(f: Any, args: tuple[Any, ...], reps: int) -> list[float]:
    """Seconds of each of ``reps`` calls ``y = f(*args); y.block_until_ready()`` on the
    host clock, as a JAX user writes it, after 5 untimed calls (its compile)."""
    for _ in range(5):
        f(*args).block_until_ready()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        y = f(*args)
        y.block_until_ready()
        times.append(time.perf_counter() - t0)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--platform", choices=("gpu", "cpu"), default="gpu")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--rounds", type=int, default=9,
                        help="alternating rounds of harness and plain loop per size")
    parser.add_argument("--reps", type=int, default=200, help="plain-loop calls per round")
    parser.add_argument("--config", type=Path, default=ROOT / "config" / "config.yaml")
    parser.add_argument("--no-cupti", action="store_true",
                        help="time the harness's device clock on the host (perf_counter "
                             "and the wait) instead of CUPTI: does CUPTI, once attached, "
                             "slow the caller's clock of the same executable?")
    parser.add_argument("--spread-s", type=float, default=1.0,
                        help="the row's spread rounds over this many seconds, as a step "
                             "takes them after its items (0: the row as measure() leaves it)")
    parser.add_argument("--trace", action="store_true",
                        help="print each size's first round's samples in order (µs)")
    args = parser.parse_args(argv)
    if args.platform == "cpu":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        settings = settings_from_config(args.config)
        backend, versions = start_backend(args.platform, os.cpu_count() or 1)
        if args.no_cupti:
            backend._cupti = None
    except Exception as exc:  # noqa: BLE001 - say why, exit 2
        print(f"setup failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(f"jax {versions.get('jax')} on {versions.get('jax_device')}; caller clock: "
          f"{backend.facts.caller_timer}; {args.rounds} rounds per size, {args.reps} plain calls "
          f"per round; harness settings: caller_min_samples={settings.caller_min_samples}, "
          f"caller_max_time_s={settings.caller_max_time_s}")
    print(f"{'size':>10} {'harness sync':>14} {'plain loop':>12} {'paired':>7} "
          f"{'(pipelined)':>12}  verdict")
    bad = 0
    for size in args.sizes:
        syncs, pipes, plains, notes = [], [], [], []
        for r in range(args.rounds):
            order = ("harness", "plain") if r % 2 == 0 else ("plain", "harness")
            for what in order:
                if what == "harness":
                    s, p, status = harness_sync(backend, size, settings, args.spread_s)
                    if status != "ok":
                        notes.append(status)
                    syncs.append(s)
                    pipes.append(p)
                else:
                    plains.append(plain_loop(backend, size, args.reps))
            if args.trace and r == 0:
                for what, times in TRACE.items():
                    print(f"  trace {size} {what}: "
                          + " ".join(f"{t * 1e6:.0f}" for t in times[:60]))
        sync, plain = float(np.nanmedian(syncs)), float(np.median(plains))
        ratio = float(np.nanmedian(np.asarray(syncs) / np.asarray(plains)))
        ok = LOW <= ratio <= HIGH
        bad += not ok
        spread = (f"rounds: harness {min(syncs) * 1e6:.1f}-{max(syncs) * 1e6:.1f} us, "
                  f"plain {min(plains) * 1e6:.1f}-{max(plains) * 1e6:.1f} us")
        print(f"{size:>10} {sync * 1e6:>11.1f} us {plain * 1e6:>9.1f} us {ratio:>7.3f} "
              f"{float(np.nanmedian(pipes)) * 1e6:>9.1f} us  "
              f"{'ok' if ok else 'OUTSIDE'} {LOW}-{HIGH} ({spread})"
              + (f"; {notes[0]}" if notes else ""))
    print("all within" if not bad else f"{bad} size(s) outside", f"{LOW}-{HIGH}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
