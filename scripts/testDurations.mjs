// Writes test/durations.json from the last run's reports (.test-results/*.json, which scripts/test.sh
// writes): the seconds each file of 10 s or more took, which test/helpers/durationSequencer.ts starts first.
// Usage: npm run test:durations (after a full `npm test`)
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = new URL('..', import.meta.url).pathname
const reports = readdirSync(join(ROOT, '.test-results')).filter((name) => name.endsWith('.json'))
const seconds = {}
for (const name of reports) {
  for (const file of JSON.parse(readFileSync(join(ROOT, '.test-results', name), 'utf8')).testResults) {
    const took = Math.round((file.endTime - file.startTime) / 1000)
    const path = file.name.replace(/^.*?\/(test\/)/, '$1') // the run's checkout may be another (CI's clone)
    if (took >= 10) seconds[path] = Math.max(seconds[path] ?? 0, took)
  }
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)))
writeFileSync(join(ROOT, 'test', 'durations.json'), `${JSON.stringify(sorted, null, 2)}\n`)
console.log(`test/durations.json: ${Object.keys(sorted).length} files of 10 s or more`)
