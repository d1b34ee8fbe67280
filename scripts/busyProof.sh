#!/usr/bin/env bash
# The suite on a busy machine (issue 20): copy a runs `npm test` three times in a row while
# copy b, a second clone of the same commit, runs it over and over beside it.
# Usage: bash scripts/busyProof.sh [COMMIT] [OUT_DIR]   (after `npm run setup`; node_modules is shared)
# Writes OUT_DIR/summary (one line per run) and a log per run; exits 0 when a's three runs passed.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
commit=${1:-HEAD}
out=${2:-$(mktemp -d /tmp/forkpoint-busy-XXXXXX)}
mkdir -p "$out"
rm -f "$out"/summary "$out"/*.log
for copy in a b; do
  rm -rf "${out:?}/$copy" && git clone -q "$repo" "$out/$copy" && git -C "$out/$copy" checkout -q "$commit"
  ln -s "$repo/node_modules" "$out/$copy/node_modules"
done
echo "commit $(git -C "$out/a" rev-parse HEAD) started $(date -u +%H:%M)" >> "$out/summary"
setsid bash -c '
  n=0
  while true; do
    n=$((n + 1))
    (cd "$1/b" && npm test > "$1/b-$n.log" 2>&1)
    echo "b run $n: exit $? $(grep "^tests:" "$1/b-$n.log") $(date -u +%H:%M)" >> "$1/summary"
  done
' _ "$out" &
b=$!
status=0
for run in 1 2 3; do
  (cd "$out/a" && npm test > "$out/a-$run.log" 2>&1) || status=1
  echo "a run $run: $(grep '^tests:' "$out/a-$run.log") $(date -u +%H:%M) (load $(cut -d' ' -f1-3 /proc/loadavg))" >> "$out/summary"
done
kill -- -"$b" 2>/dev/null
sleep 5
pkill -f "$out/b/" 2>/dev/null
cat "$out/summary"
exit $status
