"""Host and device probe: what the machine is, and what the timer itself costs.

Its JSON is the report's environment section. GPUs are read through NVML
(nvidia-ml-py); on a machine without a driver the reason is recorded instead.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

from gpubench import provenance
from gpubench.files import WriteError, atomic_write_text

#: what the probe records beside every backend's own ``probe_packages``
COMMON_PACKAGES = ("numpy", "mpi4py", "pandas", "matplotlib", "snakemake", "nvidia-ml-py")


def packages() -> tuple[str, ...]:
    """Distributions whose versions the probe records: each registered backend's
    :attr:`~gpubench.backends.facts.Facts.probe_packages`, then the common ones."""
    from gpubench.backends import backend_classes

    names = [p for cls in backend_classes().values() for p in cls.facts.probe_packages]
    return tuple(dict.fromkeys([*names, *COMMON_PACKAGES]))


def timer_overhead(samples: int = 20000) -> dict[str, float]:
    """Cost of timing an empty call through the harness: the floor under every CPU sample.

    ``per_sample_s`` is the bias inside each reported time; ``loop_s`` is the whole
    harness iteration (timing, bookkeeping, stopping rule), which bounds how many
    samples a second the harness can take.
    """
    import numpy as np

    from gpubench.backends import BASELINE_FRAMEWORK, backend_id, load_backend
    from gpubench.harness import Settings, time_samples

    backend = load_backend(backend_id(BASELINE_FRAMEWORK, "cpu"))

    def empty() -> None:
        return None

    inside = [backend.time_call(empty)[1] for _ in range(samples)]
    settings = Settings(min_samples=samples, max_samples=samples, max_time_s=60,
                        target_rel_spread=0.0)
    t0 = time.perf_counter()
    got, _, _ = time_samples(empty, backend, settings)
    loop = (time.perf_counter() - t0) / len(got)
    return {"per_sample_s": float(np.median(inside)), "loop_s": float(loop),
            "samples": samples}


def gpu_info() -> tuple[list[dict[str, Any]], str]:
    """(GPUs seen by NVML, reason when there are none)."""
    try:
        import pynvml
    except ImportError as exc:
        return [], f"nvidia-ml-py not installed ({exc})"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound etc.
        return [], f"no NVIDIA driver: NVML could not start ({exc})"
    try:
        gpus = []
        driver = pynvml.nvmlSystemGetDriverVersion()
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            info: dict[str, Any] = {
                "index": i,
                "name": pynvml.nvmlDeviceGetName(h),
                "uuid": pynvml.nvmlDeviceGetUUID(h),
                "memory_bytes": int(mem.total),
                "driver_version": driver,
            }
            optional = {
                "sm_clock_max_mhz": (pynvml.nvmlDeviceGetMaxClockInfo, h, pynvml.NVML_CLOCK_SM),
                "memory_clock_max_mhz": (pynvml.nvmlDeviceGetMaxClockInfo, h,
                                         pynvml.NVML_CLOCK_MEM),
                "cuda_driver_version": (pynvml.nvmlSystemGetCudaDriverVersion,),
                # the bounds a mean power reading must lie between (energy per call):
                # the enforced board limit and the draw before the probe's own work
                "power_limit_w": (lambda d: pynvml.nvmlDeviceGetEnforcedPowerLimit(d) / 1e3, h),
                "power_before_probe_w": (lambda d: pynvml.nvmlDeviceGetPowerUsage(d) / 1e3, h),
            }
            for key, (fn, *args) in optional.items():
                try:
                    info[key] = fn(*args)
                except Exception:  # noqa: BLE001 - optional fields vary by driver
                    pass
            gpus.append(info)
        return gpus, "" if gpus else "NVML found no GPUs"
    finally:
        pynvml.nvmlShutdown()


def package_versions() -> dict[str, str]:
    out = {}
    for name in packages():
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def transfer_bytes(sizes: Sequence[int] | None = None) -> list[int]:
    """Bytes per copy of the link kernel's cases (``transfer``: :func:`gpubench.spec.
    link_kernel`) at ``sizes`` (its elements; the kernel's default sizes when none):
    where the probe measures the bus."""
    from gpubench.spec import get_kernel, link_kernel

    spec = get_kernel(link_kernel())
    cases = spec.cases([int(s) for s in sizes] if sizes else None, list(spec.dtypes),
                       [spec.variants[0]])
    return sorted({int(spec.bytes_moved(c)) for c in cases})


def config_transfer_sizes(config: Mapping[str, Any]) -> list[int]:
    """The sizes the run's ``transfer`` steps measure on a GPU (``kernels.transfer.
    gpu_sizes``, else its ``sizes``); empty when the config leaves them to the kernel."""
    from gpubench.spec import link_kernel

    kcfg = (config.get("kernels") or {}).get(link_kernel()) or {}
    return [int(s) for s in (kcfg.get("gpu_sizes") or kcfg.get("sizes") or [])]


def measure_ceilings(has_gpu: bool, transfer_sizes: Sequence[int] | None = None
                     ) -> dict[str, Any]:
    """CPU ceilings always; GPU ceilings when a GPU and PyTorch or CuPy are there, with
    the bus probed at the ``transfer`` kernel's ``transfer_sizes`` (elements)."""
    from gpubench import ceilings

    out: dict[str, Any] = dict(ceilings.cpu_ceilings())
    if has_gpu:
        try:
            out.update(ceilings.gpu_ceilings(transfer_bytes=transfer_bytes(transfer_sizes)))
        except Exception as exc:  # noqa: BLE001 - no framework to measure with: say so
            out["gpu_error"] = f"{type(exc).__name__}: {exc}"[:300]
    return out


#: the energy cross-check's windows: the rows' (harness.energy_min_time_s) and a long one
ENERGY_SHORT_S, ENERGY_LONG_S = 0.45, 3.0


def _steady_copy(elements: int) -> tuple[Any, Any]:
    """(copy, wait) of the first installed framework the probe measures the GPU through
    (:func:`gpubench.ceilings.device_measurers`); its ImportError where none is."""
    from gpubench import ceilings

    missing: ImportError = ImportError("no GPU framework to copy with")
    for cls in ceilings.device_measurers():
        try:
            return cls.ceilings.steady_copy(elements)
        except ImportError as exc:
            missing = exc
    raise missing


def energy_crosscheck(has_gpu: bool) -> dict[str, Any]:
    """Energy per call of one steady device copy (256 MiB, through PyTorch or CuPy) over
    the rows' short window and over a long one: their relative difference
    (``rel_diff``) is the uncertainty the report gives beside work per joule. About
    4 s; a dict with ``reason`` where it cannot be made."""
    from gpubench import energy

    if not has_gpu:
        return {"reason": "no GPU"}
    try:
        copy, wait = _steady_copy(1 << 26)
        k = 8

        def batch() -> None:
            for _ in range(k):
                copy()
            wait()

        batch()
        return energy.crosscheck(batch, k, energy.meter_for("gpu"), ENERGY_SHORT_S,
                                 ENERGY_LONG_S)
    except Exception as exc:  # noqa: BLE001 - an optional reading: say why it is missing
        return {"reason": f"{type(exc).__name__}: {exc}"[:300]}


def virtual_machine(cpuinfo: str = "/proc/cpuinfo") -> dict[str, Any]:
    """Whether this host is a virtual machine, from a source that knows: systemd's
    ``systemd-detect-virt --vm`` where it is installed (it names the hypervisor, and
    ignores containers), else the ``hypervisor`` flag the CPU reports in /proc/cpuinfo
    (x86: set inside a guest). ``{"virtual": bool | None, "kind": ..., "source": ...}``;
    None where neither source can tell. Never guessed from the host's name."""
    import shutil
    import subprocess

    tool = shutil.which("systemd-detect-virt")
    if tool:
        try:
            done = subprocess.run([tool, "--vm"], capture_output=True, text=True,
                                  timeout=10, check=False)
            kind = done.stdout.strip()
            if kind and (done.returncode == 0) == (kind != "none"):
                return {"virtual": kind != "none", "kind": kind if kind != "none" else "",
                        "source": "systemd-detect-virt --vm"}
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        with open(cpuinfo) as fh:
            flags = next((line.split(":", 1)[1].split() for line in fh
                          if line.startswith("flags")), None)
    except OSError:
        flags = None
    if flags is None:
        return {"virtual": None, "kind": "", "source": "none: no systemd-detect-virt, and "
                "/proc/cpuinfo lists no CPU flags"}
    return {"virtual": "hypervisor" in flags, "kind": "",
            "source": "/proc/cpuinfo hypervisor flag"}


def probe(transfer_sizes: Sequence[int] | None = None) -> dict[str, Any]:
    """The run's record (host.json). Its ``host_conditions`` are the host's load at
    probe time, read before the probe measures anything (the probe is one step of the
    run; each row records its own step's conditions, :mod:`gpubench.hostload`)."""
    from gpubench import hostload

    conditions = hostload.run_level()
    gpus, reason = gpu_info()
    try:
        import psutil

        memory = int(psutil.virtual_memory().total)
    except ImportError:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {
        **provenance.host_info(),
        "memory_bytes": memory,
        "os": platform.platform(),
        "virtual_machine": virtual_machine(),
        "timestamp": provenance.utc_now(),
        "host_conditions": conditions,
        "timer_overhead_s": timer_overhead(),
        "gpus": gpus,
        "gpu_reason": reason,
        "packages": package_versions(),
        "ceilings": measure_ceilings(bool(gpus), transfer_sizes),
        "energy_crosscheck": energy_crosscheck(bool(gpus)),
    }


def main(argv: list[str] | None = None) -> int:
    from gpubench.cli_examples import EXAMPLES

    parser = argparse.ArgumentParser(prog="gpubench probe", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=EXAMPLES["probe"])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--transfer-sizes", type=int, nargs="*", default=None,
                        metavar="N", help="sizes (float32 elements) of the transfer "
                        "kernel's GPU cases: the bus is probed there (default: the "
                        "kernel's default sizes)")
    args = parser.parse_args(argv)
    info = probe(args.transfer_sizes)
    try:
        atomic_write_text(args.out, json.dumps(info, indent=2, sort_keys=True) + "\n")
    except WriteError as exc:
        parser.exit(1, f"gpubench probe: {exc}\n")
    ovh = info["timer_overhead_s"]
    print(f"timer overhead: {ovh['per_sample_s'] * 1e6:.3f} us inside a sample, "
          f"{ovh['loop_s'] * 1e6:.3f} us per harness iteration; "
          f"GPUs: {len(info['gpus']) or info['gpu_reason']}; ceilings: {info['ceilings']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
