#!/usr/bin/env bash
# Runs the whole vitest suite and ends with the plain 'N passed, N failed' line.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .test-results
npx vitest run --reporter=default --reporter=json --outputFile.json=.test-results/vitest.json "$@"
status=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync(".test-results/vitest.json", "utf8"))
  const skipped = r.numPendingTests + r.numTodoTests
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""))
' || true
exit $status
