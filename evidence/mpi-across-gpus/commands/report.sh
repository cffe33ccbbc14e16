#!/usr/bin/env bash
# The report's MPI section from one run's rows alone (no single-device timings: the
# report says so in its first lines), Markdown only, from the clone's root:
#   bash evidence/mpi-across-gpus/commands/report.sh evidence/mpi-across-gpus/h200x4
set -euo pipefail
RUN=${1:?the run folder (holding mpi.csv.xz)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -c "import sys; from gpubench import results; print(','.join(results.COLUMN_NAMES))" \
    > "$tmp/no_timings.csv"
python3 -m gpubench report --timings "$tmp/no_timings.csv" --env "$tmp/no_env.json" \
    --mpi "$RUN/mpi.csv.xz" --html "$tmp/index.html" --md "$tmp/summary.md" --jobs 1 >/dev/null
# the MPI section, from its heading to the next one
awk '/^## MPI$/ {on = 1} on && /^## / && !/^## MPI$/ {exit} on' "$tmp/summary.md" \
    > "$RUN/mpi_section.md"
echo "wrote $RUN/mpi_section.md"
