#!/bin/bash
# The reduced-precision GEMMs and the float32 matmul rows beside them, every GPU framework
# at n = 1024-8192 (config/config.yaml + tools/device/reduced-precision.yaml) into
# results/reduced-precision: a STEPS file for tools/device/chain.sh (carry .whl and
# .devcfg, whose COMMIT is the commit under test).
source tools/device/step.sh
snapshot /tmp/tree
step reduced-precision overlay_run reduced-precision tools/device/reduced-precision.yaml
touch /tmp/chain.done
