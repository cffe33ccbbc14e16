"""How often the energy counters move: NVML's total-energy counter (GPU) while CuPy keeps
the GPU busy and while it idles, and RAPL (CPU packages) where readable. Prints JSON."""
import glob
import json
import time

import numpy as np

out = {}
try:
    import cupy as cp
    import pynvml

    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    a = cp.random.random(2**26, dtype=cp.float32)
    b = cp.empty_like(a)

    def ticks(busy, seconds=1.5):
        e0 = pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
        t_end = time.perf_counter() + seconds
        changes, last = [], e0
        while time.perf_counter() < t_end:
            if busy:
                for _ in range(4):
                    cp.add(a, a, out=b)
                cp.cuda.Device().synchronize()
            e = pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
            if e != last:
                changes.append((time.perf_counter(), e - last))
                last = e
        gaps = np.diff([t for t, _ in changes]) * 1e3
        gap = float(np.median(gaps)) if len(gaps) else None
        return {"changes": len(changes), "gap_ms_median": gap,
                "gap_ms_min": float(gaps.min()) if len(gaps) else None,
                "gap_ms_max": float(gaps.max()) if len(gaps) else None,
                "step_mJ_median": float(np.median([d for _, d in changes])) if changes else None,
                "power_w_nvml": pynvml.nvmlDeviceGetPowerUsage(h) / 1e3}

    out["nvml_busy"] = ticks(True)
    time.sleep(0.5)
    out["nvml_idle"] = ticks(False)
    out["power_limit_w"] = pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1e3
except Exception as exc:  # noqa: BLE001
    out["nvml_error"] = repr(exc)
zones = sorted(glob.glob("/sys/class/powercap/intel-rapl:*"))
out["rapl_zones"] = zones
for z in zones[:2]:
    try:
        out[z] = [open(z + "/name").read().strip(), open(z + "/energy_uj").read().strip()]
    except OSError as exc:
        out[z] = repr(exc)
print(json.dumps(out, indent=1))
