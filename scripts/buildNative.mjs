// Builds the native parts:
// - native/sandbox.c with the C compiler (cc, or $CC) into build/forkpoint-sandbox: the sandbox
//   runtime (src/sandbox/), required for branches of the overlay backend and sandboxed runs;
//   its seccomp filter first, by native/seccompFilter.c built with libseccomp (libseccomp-dev)
//   and run here, into build/seccomp-filter.h;
// - native/lstat_names.c (binding.gyp) with node-gyp into build/Release/forkpoint_native.node:
//   the batched lstat a warm snapshot uses (src/world/scan/lstatNames.ts).
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
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { arch, tmpdir } from 'node:os'
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

/** The seccomp filter's generator, built for this machine with libseccomp (libseccomp-dev), into `out`. */
function buildFilterGenerator(out) {
  mkdirSync(dirname(out), { recursive: true })
  return run(cc, ['-O2', '-Wall', '-o', out, 'native/seccompFilter.c', '-lseccomp'])
}

/** Compiles into `out`, beside it first and renamed over it: a running holder keeps its program, a concurrent build or pack never reads half a file. */
function compileTo(compiler, args, out) {
  const temporary = `${out}.${process.pid}.tmp`
  const built = run(compiler, [...args, '-o', temporary])
  if (built.status === 0) renameSync(temporary, out)
  return built
}

/** Writes `out` as compileTo does. */
function writeAtomically(out, content) {
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(`${out}.${process.pid}.tmp`, content)
  renameSync(`${out}.${process.pid}.tmp`, out)
}

const buildRuntime = (compiler, filterDir, out, flags = []) => compileTo(compiler, ['-O2', '-Wall', ...flags, `-I${filterDir}`, 'native/sandbox.c', 'native/egress.c'], out)

function buildHere() {
  // npm gives its own node-gyp to the scripts it runs, with the configuration (nodedir) it reads
  const gyp = process.env.npm_config_node_gyp
  const command = gyp ? [process.execPath, gyp] : ['node-gyp']
  const step = existsSync('build/config.gypi') ? 'build' : 'rebuild'
  const addon = spawnSync(command[0], [...command.slice(1), step, '--loglevel=error'], { encoding: 'utf8' })
  if (addon.status !== 0)
    fail(`node-gyp ${step}`, tail(addon), (why) => `the native lstat helper was not built (${why}); scans use Node's lstat, about three times slower per file`)

  // after node-gyp, whose rebuild starts from an empty build/
  const generator = buildFilterGenerator('build/seccomp-filter')
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

/** Each target's runtime and addon into prebuilds/, its seccomp filter kept in build/prebuild-<arch>/; the generator in a directory of this run's own. */
function buildPrebuilds() {
  const work = mkdtempSync(join(tmpdir(), 'forkpoint-prebuilds-'))
  try {
    const generator = buildFilterGenerator(join(work, 'seccomp-filter'))
    if (generator.status !== 0) fail(`${cc} native/seccompFilter.c`, tail(generator), (why) => why)
    const headers = nodeApiHeaders()
    for (const target of PREBUILT) {
      const compiler = target.arch === arch() ? cc : target.compiler
      const dir = prebuiltDir(target.arch)
      const filterDir = `build/prebuild-${target.arch}`
      mkdirSync(dir, { recursive: true })
      writeAtomically(`${filterDir}/seccomp-filter.h`, mustRun(join(work, 'seccomp-filter'), [target.seccompArch]).stdout)
      const runtime = buildRuntime(compiler, filterDir, `${dir}/forkpoint-sandbox`, ['-static', '-s'])
      if (runtime.status !== 0) fail(`${compiler} native/sandbox.c`, tail(runtime), (why) => why)
      // as binding.gyp compiles it, less node-gyp: the addon needs only Node-API's headers
      const addon = compileTo(
        compiler,
        ['-O2', '-ffp-contract=off', '-Wall', '-fPIC', '-shared', '-pthread', '-s', `-I${headers}`, 'native/lstat_names.c'],
        `${dir}/forkpoint_native.node`,
      )
      if (addon.status !== 0) fail(`${compiler} native/lstat_names.c`, tail(addon), (why) => why)
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

const prebuiltFits = () => PREBUILT_FILES.every((file) => existsSync(join(`prebuilds/${process.platform}-${process.arch}`, file)))

if (process.argv.includes('--prebuilds')) buildPrebuilds()
else if (!(optional && prebuiltFits())) buildHere()
