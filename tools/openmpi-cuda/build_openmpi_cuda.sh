#!/usr/bin/env bash
# Build Open MPI 4.1.4 with its own CUDA support (no UCX) on a GPU host without network:
#   bash tools/openmpi-cuda/build_openmpi_cuda.sh [PREFIX]
# Needs .ompi/openmpi_4.1.4.orig.tar.xz (fetch_source.sh, carried), a C compiler and the
# CUDA headers (cuda.h). Route: Open MPI's own CUDA support (--with-cuda): the ob1 PML
# detects device pointers and the smcuda BTL moves device buffers between ranks of one
# host through CUDA IPC (NVLink where the GPUs have it). libcuda is opened at run time.
# The MPI-1 compatibility symbols are kept so an mpi4py built against the host's Debian
# Open MPI 4.1 (libmpi.so.40) loads this library through LD_LIBRARY_PATH unchanged.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PREFIX=${1:-/tmp/ompi-cuda}
CUDA=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
[[ -f $CUDA/include/cuda.h ]] || { echo "no cuda.h under $CUDA" >&2; exit 1; }
BUILD=${BUILD_DIR:-/tmp/ompi-build}
mkdir -p "$BUILD"
tar xJf "$ROOT/.ompi/openmpi_4.1.4.orig.tar.xz" -C "$BUILD"
cd "$BUILD"/openmpi-4.1.4
echo "[build] CUDA=$CUDA PREFIX=$PREFIX cores=$(nproc) $(gcc --version | head -1)"
T0=$(date +%s)
./configure --prefix="$PREFIX" --with-cuda="$CUDA" --without-ucx --without-verbs \
    --without-ofi --with-hwloc=internal --with-libevent=internal --with-pmix=internal \
    --enable-mpi1-compatibility --disable-mpi-fortran --disable-oshmem \
    --disable-man-pages --disable-static > configure.log 2>&1 \
    || { tail -40 configure.log; exit 1; }
T1=$(date +%s)
make -j"$(nproc)" > make.log 2>&1 || { grep -n -B2 -A8 "error" make.log | tail -60; exit 1; }
make install > install.log 2>&1 || { tail -30 install.log; exit 1; }
T2=$(date +%s)
echo "[build] configure $((T1 - T0)) s, make + install $((T2 - T1)) s"
"$PREFIX/bin/ompi_info" --parsable --all | grep -E "mpi_built_with_cuda_support|btl:smcuda" | head -5
