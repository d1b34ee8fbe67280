#!/usr/bin/env bash
# Runs the vitest suite tier by tier (vitest.config.ts): `unit` first, then `integration` (the integration
# and node-lstat projects). Ends with each tier's time, how busy the machine's CPUs were meanwhile (the suite
# is bound by them on a small host: the time a tier takes there is its CPU seconds over the cores), and the
# plain 'N passed, N failed' line.
# Usage: scripts/test.sh [unit|integration]... (no argument: both)
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .test-results
rm -f .test-results/*.json

declare -A PROJECTS=([unit]='--project unit' [integration]='--project integration --project node-lstat')
tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=(unit integration)

# CPU seconds the whole machine has spent busy so far (/proc/stat: all but idle and iowait)
busy_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '/^cpu / { print ($2 + $3 + $4 + $7 + $8 + $9) / hz; exit }' /proc/stat
}

status=0
timings=()
for tier in "${tiers[@]}"; do
  if [ -z "${PROJECTS[$tier]:-}" ]; then
    echo "test.sh: no tier '$tier' (unit or integration)" >&2
    exit 2
  fi
  start=$SECONDS
  busy=$(busy_seconds)
  # shellcheck disable=SC2086 # the project options are words
  npx vitest run ${PROJECTS[$tier]} --reporter=default --reporter=json --outputFile.json=".test-results/$tier.json" || status=1
  took=$((SECONDS - start))
  cpu=$(awk -v a="$busy" -v b="$(busy_seconds)" -v s="$took" -v n="$(nproc)" 'BEGIN { printf "%d CPU-s: %d%% of %d cores", b - a, s ? 100 * (b - a) / (s * n) : 0, n }')
  timings+=("$tier: $took s ($cpu)")
done

node -e '
  const { readFileSync } = require("fs")
  const reports = process.argv.slice(1).map((tier) => JSON.parse(readFileSync(`.test-results/${tier}.json`, "utf8")))
  const sum = (key) => reports.reduce((n, r) => n + r[key], 0)
  const skipped = sum("numPendingTests") + sum("numTodoTests")
  console.log(`tests: ${sum("numPassedTests")} passed, ${sum("numFailedTests")} failed` + (skipped ? `, ${skipped} skipped` : ""))
' "${tiers[@]}" || true
echo "tiers: $(IFS=,; echo "${timings[*]}" | sed 's/,/, /g'), total: $SECONDS s"
exit $status
