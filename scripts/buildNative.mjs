// Compiles native/lstat_names.c (binding.gyp) into build/Release/forkpoint_native.node
// with node-gyp: the batched lstat a warm snapshot uses (src/world/lstatNames.ts).
// `--optional` (the package's install script): a failed build prints one line and exits 0,
// and the scan uses Node's lstatSync instead. Without it (npm run build) a failure fails.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'

const optional = process.argv.includes('--optional')
// npm gives its own node-gyp to the scripts it runs, with the configuration (nodedir) it reads
const gyp = process.env.npm_config_node_gyp
const command = gyp ? [process.execPath, gyp] : ['node-gyp']
const step = existsSync('build/config.gypi') ? 'build' : 'rebuild'
const run = spawnSync(command[0], [...command.slice(1), step, '--loglevel=error'], { encoding: 'utf8' })
if (run.status !== 0) {
  const why = run.error?.message ?? `${run.stderr}${run.stdout}`.trim().split('\n').slice(-3).join(' | ')
  if (!optional) {
    console.error(`buildNative: node-gyp ${step} failed: ${why}`)
    process.exit(1)
  }
  console.error(`forkpoint: the native lstat helper was not built (${why}); scans use Node's lstat, about three times slower per file`)
}
