"""What a run's progress lines must say, read by the workflow tests (local and SLURM)."""

from __future__ import annotations

from pathlib import Path

from gpubench import progress, results


def check_progress(driver_log: str, res: Path, logs: Path) -> None:
    """The driver's progress lines count every step's rows, the last one all of them
    (100 %); each step's log counts its own to the last."""
    frame = results.read_timings(res / "timings.csv")
    lines = [x for x in driver_log.splitlines() if x.startswith(progress.PREFIX)]
    assert len(lines) >= 2, driver_log[-3000:]
    n = len(frame)
    assert lines[-1].startswith(f"{progress.PREFIX} {n:,}/{n:,} measurements (100 %)")
    for backend, k in frame["backend"].value_counts().items():
        assert f"{backend} {k}/{k} done" in lines[-1]
        log = (logs / "run_backend" / f"{backend}.log").read_text()
        counts = [x for x in log.splitlines() if x.startswith(f"[{backend}] progress ")]
        assert counts and f"progress {k}/{k} measurements (100 %)" in counts[-1]
