// Builds the native parts:
// - native/sandbox.c with the C compiler (cc, or $CC) into build/forkpoint-sandbox: the sandbox
//   runtime (src/sandbox/), required for branches of the overlay backend and sandboxed runs;
//   its seccomp filter first, by native/seccompFilter.c built with libseccomp (libseccomp-dev)
//   and run here, into build/seccomp-filter.h;
// - native/lstat_names.c (binding.gyp) with node-gyp into build/Release/forkpoint_native.node:
//   the batched lstat a warm snapshot uses (src/world/lstatNames.ts).
// `--optional` (the package's install script): a failed build prints one line and exits 0
// (without the runtime, sandboxes and overlay branches say how to build it; scans use Node's
// lstatSync instead). Without it (npm run build) a failure fails.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'

const optional = process.argv.includes('--optional')

function fail(what, why, fallback) {
  if (!optional) {
    console.error(`buildNative: ${what} failed: ${why}`)
    process.exit(1)
  }
  console.error(`forkpoint: ${fallback(why)}`)
}

const tail = (run) => run.error?.message ?? `${run.stderr}${run.stdout}`.trim().split('\n').slice(-3).join(' | ')

// npm gives its own node-gyp to the scripts it runs, with the configuration (nodedir) it reads
const gyp = process.env.npm_config_node_gyp
const command = gyp ? [process.execPath, gyp] : ['node-gyp']
const step = existsSync('build/config.gypi') ? 'build' : 'rebuild'
const addon = spawnSync(command[0], [...command.slice(1), step, '--loglevel=error'], { encoding: 'utf8' })
if (addon.status !== 0) fail(`node-gyp ${step}`, tail(addon), (why) => `the native lstat helper was not built (${why}); scans use Node's lstat, about three times slower per file`)

// after node-gyp, whose rebuild starts from an empty build/
mkdirSync('build', { recursive: true })
const cc = process.env.CC || 'cc'
// the seccomp filter is compiled once here with libseccomp (libseccomp-dev), into a header the runtime includes
const generator = spawnSync(cc, ['-O2', '-Wall', '-o', 'build/seccomp-filter', 'native/seccompFilter.c', '-lseccomp'], { encoding: 'utf8' })
const filter = generator.status === 0 ? spawnSync('build/seccomp-filter', { encoding: 'utf8' }) : generator
if (filter.status === 0) writeFileSync('build/seccomp-filter.h', filter.stdout)
// built beside it, then renamed over it: a running holder keeps its program, and no one execs half a file
const sandbox =
  filter.status === 0 ? spawnSync(cc, ['-O2', '-Wall', '-Ibuild', '-o', 'build/forkpoint-sandbox.tmp', 'native/sandbox.c', 'native/egress.c'], { encoding: 'utf8' }) : filter
if (sandbox.status === 0) renameSync('build/forkpoint-sandbox.tmp', 'build/forkpoint-sandbox')
else fail(`${cc} native/sandbox.c`, tail(sandbox), (why) => `the sandbox runtime was not built (${why}); sandboxed runs and overlay branches need it (and libseccomp-dev to build)`)
