// `npm test` builds only when the build is older than what it is built from: CI's `npm run setup` has just
// built, and a developer who edited src/ gets a fresh build. Each output below is rewritten by its step of
// `npm run build` on every build, or (the node-gyp addon) whenever its own sources are newer, so an output
// older than any of its inputs, or missing, means the build is stale; then the whole `npm run build` runs.
// `--check` prints what is stale and exits 1 (0 when up to date) without building.
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const common = ['package.json', 'tsconfig.json', 'tsconfig.build.json']

/** Each build output, and what it is built from: files, or directories taken whole. */
export const OUTPUTS = {
  'dist/index.js': ['src', ...common],
  'dist/cli/main.cjs': ['src', 'scripts/bundleCli.mjs', ...common],
  'dist/ui/app.js': ['src/ui', 'scripts/bundleUi.mjs', ...common],
  'build/Release/forkpoint_native.node': ['native/lstat_names.c', 'binding.gyp'],
  'build/forkpoint-sandbox': ['native', 'scripts/buildNative.mjs'],
}

/** The newest modification time under `path` (a file, or every file below a directory), with the file it belongs to. */
function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false })
  if (!stat) return { mtimeMs: 0, path }
  if (!stat.isDirectory()) return { mtimeMs: stat.mtimeMs, path }
  return readdirSync(path)
    .map((name) => newest(join(path, name)))
    .reduce((a, b) => (b.mtimeMs > a.mtimeMs ? b : a), { mtimeMs: stat.mtimeMs, path })
}

/** Why the build in `root` is stale (one line an output), or nothing when it is up to date. */
export function staleReasons(root = '.') {
  return Object.entries(OUTPUTS).flatMap(([output, inputs]) => {
    const built = statSync(join(root, output), { throwIfNoEntry: false })
    if (!built) return [`${output} is missing`]
    const source = inputs.map((input) => newest(join(root, input))).reduce((a, b) => (b.mtimeMs > a.mtimeMs ? b : a))
    return source.mtimeMs > built.mtimeMs ? [`${output} is older than ${source.path}`] : []
  })
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const reasons = staleReasons()
  if (process.argv.includes('--check')) {
    for (const reason of reasons) console.log(reason)
    process.exit(reasons.length ? 1 : 0)
  }
  if (reasons.length === 0) console.log('build: up to date with src/, native/ and scripts/, not rebuilt')
  else {
    console.log(`build: ${reasons[0]}${reasons.length > 1 ? ` (and ${reasons.length - 1} more)` : ''}; building`)
    const run = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' })
    process.exit(run.status ?? 1)
  }
}
