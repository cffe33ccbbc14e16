#!/bin/bash
# Call 0 (carry .ompi, .devcfg): build CUDA-aware Open MPI in its own session, so that it
# outlives this call; return once the source is unpacked (later calls need not carry it).
setsid nohup bash -c "bash evidence/cuda_aware_mpi/commands/build_openmpi_cuda.sh /tmp/ompi-cuda \
  > /tmp/ompi-build.log 2>&1; touch /tmp/ompi.done" > /dev/null 2>&1 &
for _ in $(seq 120); do [ -f /tmp/ompi-build/openmpi-4.1.4/configure.log ] && break; sleep 1; done
cat /tmp/ompi-build.log
