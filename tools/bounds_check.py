"""The new probe's ceilings on this GPU, and what they would do to a committed run.

1. Runs the probe as the workflow does (``python -m gpubench probe``) with the transfer
   kernel's GPU sizes from ``config/config.yaml``, and prints the new ceilings: the
   L2-resident copy (every method and footprint), the pinned bus per direction and size
   (the transfers' reference), the pageable results beside it, and the old flat keys.
2. Re-judges a committed run's timings (default ``evidence/energy-per-call/h100``) with these
   ceilings in place of its own, and prints: the rows whose status would change, the
   memory-bound rows within 2x L2 closest to the L2-resident ceiling (the margin of the
   new gate on correct rows), and per transfer direction the highest % of its reference.

    python tools/bounds_check.py [--run evidence/energy-per-call/h100] [--out host.json]

Exit status 0 when the probe measured the new keys, 1 when one is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path,
                        default=ROOT / "evidence" / "energy-per-call" / "h100")
    parser.add_argument("--out", type=Path, help="keep the probe's JSON here")
    parser.add_argument("--config", type=Path, default=ROOT / "config" / "config.yaml")
    args = parser.parse_args(argv)

    import yaml

    from gpubench import plausibility, probe
    from gpubench.ceilings import fmt_bytes, link_table
    from gpubench.results import read_timings

    # read as written (no schema check: the GPU machine may lack jsonschema)
    sizes = probe.config_transfer_sizes(yaml.safe_load(args.config.read_text()))
    out = args.out or Path(tempfile.mkdtemp()) / "host.json"
    cmd = [sys.executable, "-m", "gpubench", "probe", "--out", str(out),
           "--transfer-sizes", *map(str, sizes)]
    print("$", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    if done.returncode:
        return done.returncode
    c = json.loads(out.read_text())["ceilings"]
    print(f"\nprobe JSON: {out}\nGPU: {c.get('gpu_name')}, measured with "
          f"{c.get('measured_with')}, L2 {fmt_bytes(c.get('l2_bytes') or 0)}"
          + (f"\ngpu_error: {c['gpu_error']}" if "gpu_error" in c else ""))
    print(f"d2d_copy_gbps {c.get('d2d_copy_gbps', float('nan')):,.0f} "
          f"({c.get('d2d_copy_method')})")
    print(f"l2_copy_gbps  {c.get('l2_copy_gbps', float('nan')):,.0f} ({c.get('l2_copy_method')},"
          f" {fmt_bytes(c.get('l2_copy_bytes') or 0)}, queued whole: "
          f"{c.get('l2_copy_queued')}) {c.get('l2_copy_error', '')}")
    for label, gbps in (c.get("l2_copy_gbps_by_method") or {}).items():
        print(f"    {label:<48} {gbps:10,.0f} GB/s")
    print(f"old keys: h2d_pinned_gbps {c.get('h2d_pinned_gbps', float('nan')):.2f}, "
          f"h2d_pageable_gbps {c.get('h2d_pageable_gbps', float('nan')):.2f} (1 GiB)")
    print(f"pinned batches queued whole: {c.get('pinned_queued')}")
    pinned, pageable = link_table(c), link_table(c, "pageable_gbps")
    for direction in ("h2d", "d2h"):
        for n, v in (pinned.get(direction) or {}).items():
            page = (pageable.get(direction) or {}).get(n, float("nan"))
            print(f"    {direction} {fmt_bytes(n):>9}: pinned {v:6.2f} GB/s, "
                  f"pageable {page:6.2f} GB/s")
    missing = [k for k in ("l2_copy_gbps", "pinned_gbps", "pageable_gbps") if k not in c]

    timings = args.run / "timings.csv"
    if timings.exists():
        frame = read_timings(timings)
        before = frame["status"].copy()
        plausibility.judge(frame, c)
        changed = frame[before != frame["status"]]
        print(f"\n{timings}: {len(changed)} row(s) change status with these ceilings")
        for i, r in changed.iterrows():
            print(f"  {before[i]} -> {r['status']}: {r['backend']} {r['implementation']} "
                  f"{r['kernel']}/{r['variant']} {r['dtype']} n={r['size']} {r['mode']}: "
                  f"{r['reason'][:200]}")
        gpu = frame[(frame["device"] == "gpu") & frame["status"].isin(["ok", "implausible"])]
        l2 = gpu[gpu["ceiling"].astype(str).str.startswith("l2_copy")]
        top = l2.sort_values("pct_of_ceiling", ascending=False).head(8)
        print(f"\nwithin 2x L2, closest to the L2-resident ceiling ({len(l2)} rows):")
        for _, r in top.iterrows():
            print(f"  {r['pct_of_ceiling']:6.1f} %  {r['gbps']:8,.0f} GB/s  {r['backend']} "
                  f"{r['implementation']} {r['kernel']}/{r['variant']} {r['dtype']} "
                  f"n={r['size']} {r['mode']} ({r['timer']})")
        t = gpu[gpu["kernel"] == "transfer"]
        if len(t):
            print("\ntransfers, highest % of their direction's pinned reference:")
            print(t.groupby(["variant"])["pct_of_ceiling"].agg(["max", "median", "count"])
                  .to_string(float_format=lambda x: f"{x:.1f}"))
    if missing:
        print(f"\nMISSING from the probe: {missing}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
