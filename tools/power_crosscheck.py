"""Does NVML's energy counter agree with NVML's power reading and the board's limit?
DGEMM 8192 (CuPy, cuBLAS) back to back for 3 s, the power-capped case; then 1 s idle.
Prints the counter's mean power, the mean of nvmlDeviceGetPowerUsage read every 20 ms,
the SM clock and the enforced limit, as JSON."""
import json
import threading
import time

import cupy as cp
import pynvml

pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(0)
a = cp.random.random((8192, 8192))
b = cp.random.random((8192, 8192))


def window(busy: bool, seconds: float) -> dict:
    readings, clocks, stop = [], [], threading.Event()

    def poll() -> None:
        while not stop.is_set():
            readings.append(pynvml.nvmlDeviceGetPowerUsage(h) / 1e3)
            clocks.append(pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM))
            time.sleep(0.02)

    if busy:  # reach the steady, capped state first
        for _ in range(20):
            a @ b
        cp.cuda.Device().synchronize()
    e0, t0 = pynvml.nvmlDeviceGetTotalEnergyConsumption(h), time.perf_counter()
    th = threading.Thread(target=poll)
    th.start()
    while time.perf_counter() - t0 < seconds:
        if busy:
            for _ in range(5):
                a @ b
            cp.cuda.Device().synchronize()
        else:
            time.sleep(0.01)
    e1, t1 = pynvml.nvmlDeviceGetTotalEnergyConsumption(h), time.perf_counter()
    stop.set()
    th.join()
    return {"counter_mean_w": (e1 - e0) / 1e3 / (t1 - t0), "seconds": t1 - t0,
            "power_usage_mean_w": sum(readings) / len(readings),
            "power_usage_max_w": max(readings), "sm_clock_mean_mhz": sum(clocks) / len(clocks)}


out = {"dgemm_8192": window(True, 3.0)}
time.sleep(1.0)
out["idle"] = window(False, 2.0)
out["enforced_limit_w"] = pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1e3
out["name"] = pynvml.nvmlDeviceGetName(h)
print(json.dumps(out, indent=1))
