#!/bin/bash
# The block-size sweep (block-sizes.yaml over config/config.yaml) into
# results/block-sizes (STEPS file for tools/device/chain.sh; carry .whl and .devcfg,
# whose COMMIT is the commit under test): the rows, the report, the GPU's name and clocks.
source tools/device/step.sh
snapshot /tmp/tree
step block-sizes overlay_run block-sizes tools/device/block-sizes.yaml
touch /tmp/chain.done
