import { createRequire } from 'node:module'
import { servedSnapshot } from './servedSnapshot.js'

// `forkpoint snapshot [-m MESSAGE] [--json]` (bin/forkpoint runs this bundle, dist/cli/snapshot.cjs, for such
// a line): the store's service's client alone; the whole command line, dist/cli/main.cjs beside this
// bundle, loads when the service does not answer it
void servedSnapshot(process.argv.slice(2), process.env).then((answered) => {
  if (answered) process.exit(process.exitCode ?? 0)
  else createRequire(import.meta.url)('./main.cjs')
})
