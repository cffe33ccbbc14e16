#!/bin/bash
# First call: how often the energy counters move, and the energy-per-call
# reading of every GPU backend (and NumPy) on a small config, before the full suites.
export PYTHONPATH=src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
python3 tools/energy_counter.py | tee $OUT/energy_counter.json
CFG='{"harness": {"max_time_s": 0.3, "min_samples": 5}, "gpu_harness": {"max_time_s": 0.03}, "energy": "largest", "threads": [1, "max"],
 "kernels": {"vector_add": {"sizes": [1048576, 4194304], "gpu_sizes": [1048576, 67108864], "dtypes": ["float32"]},
             "launch_overhead": {"sizes": [1], "dtypes": ["float32"]},
             "matmul": {"sizes": [1024], "gpu_sizes": [8192], "dtypes": ["float32", "float64"], "gpu_modes": ["hot"]}}}'
for b in numpy-cpu cupy-gpu torch-gpu jax-gpu cuda_python-gpu numba-gpu; do
  timeout 100 python3 -m gpubench run --backend $b --config-json "$CFG" --csv $OUT/$b.csv \
    --samples $OUT/$b.samples.csv 2>&1 | grep -v "^\s*$" | tail -n 8
done
