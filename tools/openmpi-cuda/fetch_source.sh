#!/usr/bin/env bash
# Fetch Open MPI's source from Debian (bookworm's source package, the same 4.1 ABI as the
# GPU hosts' Open MPI 4.1.6, so their mpi4py loads it) into .ompi/ (git-excluded), and
# check it against the checksum in Debian's signed Sources index.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .ompi
VER=4.1.4
TAR=openmpi_${VER}.orig.tar.xz
SHA=ddaee7dbdb01eb4fab1fda5b5e03e8bbff026711806c095c1f39bb410f99f263  # Sources, bookworm
[[ -f .ompi/$TAR ]] || curl -sSf --max-time 300 -o .ompi/$TAR \
    "http://deb.debian.org/debian/pool/main/o/openmpi/$TAR"
echo "$SHA  .ompi/$TAR" | sha256sum -c -
grep -qx '/.ompi/' .git/info/exclude 2>/dev/null || echo '/.ompi/' >> .git/info/exclude
