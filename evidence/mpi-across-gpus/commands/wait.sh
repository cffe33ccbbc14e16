#!/usr/bin/env bash
# Wait up to $1 seconds for sweep.sh to finish, showing its phases; then hand back the
# latest packed results, and the folder as it is now, in $OUT (a device call returns only
# what is under $OUT).
R=${R:-/tmp/mgpu/res}
end=$(( $(date +%s) + ${1:-540} ))
while [[ $(date +%s) -lt $end ]] && ! grep -q '^\[done\]' "$R/phases.txt" 2>/dev/null; do
    sleep 5
done
cat "$R/phases.txt" 2>/dev/null; tail -4 "$R/sweep.log" 2>/dev/null
tar czf "$OUT/now.tgz" -C "$(dirname "$R")" "$(basename "$R")"
[[ -f $R.tgz ]] && cp "$R.tgz" "$OUT/res.tgz"
ls -la "$OUT"
