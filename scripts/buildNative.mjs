// Builds the native parts:
// - native/sandbox.c with the C compiler (cc, or $CC) into build/forkpoint-sandbox: the sandbox
//   runtime (src/sandbox/), required for branches of the overlay backend and sandboxed runs;
//   its seccomp filter first, by native/seccompFilter.c built with libseccomp (libseccomp-dev)
//   and run here, into build/seccomp-filter.h;
// - native/lstat_names.c (binding.gyp) with node-gyp into build/Release/forkpoint_native.node:
//   the batched lstat a warm snapshot uses (src/world/lstatNames.ts).
// `--prebuilds` (npm run build, and npm pack's prepack): both parts for every platform in
// PREBUILT, into prebuilds/<platform>-<arch>/, which the package ships: the runtime linked
// statically (it runs on any Linux libc), the addon compiled against Node-API's headers
// (one build serves every Node version); other architectures with Debian's cross compilers
// (gcc-aarch64-linux-gnu). The seccomp filter of each is written here by libseccomp for that
// architecture, so neither the runtime nor the target needs libseccomp.
// `--optional` (the package's install script): nothing to do where a prebuilt fits; elsewhere
// a failed build prints one line and exits 0 (without the runtime, sandboxes and overlay
// branches say how to build it; scans use Node's lstatSync instead). Without it (npm run
// build) a failure fails.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { arch } from 'node:os'
import { dirname, join } from 'node:path'

const optional = process.argv.includes('--optional')

/** Node's arch, the cross compiler for it, and libseccomp's name of it. */
const PREBUILT = [
  { arch: 'x64', compiler: 'x86_64-linux-gnu-gcc', seccompArch: 'x86_64' },
  { arch: 'arm64', compiler: 'aarch64-linux-gnu-gcc', seccompArch: 'aarch64' },
]
const prebuiltDir = (target) => `prebuilds/linux-${target}`
const PREBUILT_FILES = ['forkpoint-sandbox', 'forkpoint_native.node']

function fail(what, why, fallback) {
  if (!optional) {
    console.error(`buildNative: ${what} failed: ${why}`)
    process.exit(1)
  }
  console.error(`forkpoint: ${fallback(why)}`)
}

const tail = (run) => run.error?.message ?? `${run.stderr}${run.stdout}`.trim().split('\n').slice(-3).join(' | ')
const run = (command, args) => spawnSync(command, args, { encoding: 'utf8' })
const mustRun = (command, args) => {
  const done = run(command, args)
  if (done.status !== 0) fail(`${command} ${args.at(-1)}`, tail(done), (why) => why)
  return done
}
const cc = process.env.CC || 'cc'

/** The seccomp filter's generator, built for this machine with libseccomp (libseccomp-dev). */
function buildFilterGenerator() {
  mkdirSync('build', { recursive: true })
  return run(cc, ['-O2', '-Wall', '-o', 'build/seccomp-filter', 'native/seccompFilter.c', '-lseccomp'])
}

/** Writes the runtime `out`, built beside it and renamed over it: a running holder keeps its program, and no one execs half a file. */
function buildRuntime(compiler, filterDir, out, flags = []) {
  const built = run(compiler, ['-O2', '-Wall', ...flags, `-I${filterDir}`, '-o', `${out}.tmp`, 'native/sandbox.c', 'native/egress.c'])
  if (built.status === 0) renameSync(`${out}.tmp`, out)
  return built
}

function buildHere() {
  // npm gives its own node-gyp to the scripts it runs, with the configuration (nodedir) it reads
  const gyp = process.env.npm_config_node_gyp
  const command = gyp ? [process.execPath, gyp] : ['node-gyp']
  const step = existsSync('build/config.gypi') ? 'build' : 'rebuild'
  const addon = spawnSync(command[0], [...command.slice(1), step, '--loglevel=error'], { encoding: 'utf8' })
  if (addon.status !== 0)
    fail(`node-gyp ${step}`, tail(addon), (why) => `the native lstat helper was not built (${why}); scans use Node's lstat, about three times slower per file`)

  // after node-gyp, whose rebuild starts from an empty build/
  const generator = buildFilterGenerator()
  const filter = generator.status === 0 ? run('build/seccomp-filter', []) : generator
  if (filter.status === 0) writeFileSync('build/seccomp-filter.h', filter.stdout)
  const sandbox = filter.status === 0 ? buildRuntime(cc, 'build', 'build/forkpoint-sandbox') : filter
  if (sandbox.status !== 0)
    fail(`${cc} native/sandbox.c`, tail(sandbox), (why) => `the sandbox runtime was not built (${why}); sandboxed runs and overlay branches need it (and libseccomp-dev to build)`)
}

/** Node-API's headers, installed beside the node that runs this (Debian's nodejs, and Node's own tarballs, have them). */
function nodeApiHeaders() {
  const dir = join(dirname(dirname(process.execPath)), 'include', 'node')
  if (!existsSync(join(dir, 'node_api.h'))) fail('finding node_api.h', `not in ${dir}`, (why) => why)
  return dir
}

function buildPrebuilds() {
  const generator = buildFilterGenerator()
  if (generator.status !== 0) fail(`${cc} native/seccompFilter.c`, tail(generator), (why) => why)
  const headers = nodeApiHeaders()
  for (const target of PREBUILT) {
    const compiler = target.arch === arch() ? cc : target.compiler
    const dir = prebuiltDir(target.arch)
    const filterDir = `build/prebuild-${target.arch}`
    mkdirSync(dir, { recursive: true })
    mkdirSync(filterDir, { recursive: true })
    writeFileSync(`${filterDir}/seccomp-filter.h`, mustRun('build/seccomp-filter', [target.seccompArch]).stdout)
    const runtime = buildRuntime(compiler, filterDir, `${dir}/forkpoint-sandbox`, ['-static', '-s'])
    if (runtime.status !== 0) fail(`${compiler} native/sandbox.c`, tail(runtime), (why) => why)
    // as binding.gyp compiles it, less node-gyp: the addon needs only Node-API's headers
    mustRun(compiler, ['-O2', '-ffp-contract=off', '-Wall', '-fPIC', '-shared', '-pthread', '-s', `-I${headers}`, '-o', `${dir}/forkpoint_native.node`, 'native/lstat_names.c'])
  }
}

const prebuiltFits = () => PREBUILT_FILES.every((file) => existsSync(join(`prebuilds/${process.platform}-${process.arch}`, file)))

if (process.argv.includes('--prebuilds')) buildPrebuilds()
else if (!(optional && prebuiltFits())) buildHere()
