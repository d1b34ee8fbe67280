/**
 * `npm run bench -- cli [--quick]`: what the CLI's start costs, and whether the one-file
 * bundle pays: each command line as `bin/forkpoint` runs it (dist/cli/main.cjs, made by
 * scripts/bundleCli.mjs) against the same command from the compiled ES modules it is made
 * of (`node dist/cli/main.js`), interleaved, after `npm run build`. The bundle stays in the
 * build only while these rows show it pays (docs/cli-startup.md).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Row, compare, measure, report } from './harness.js'
import { makeFixture } from './workspaceFixture.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const CLI = join(ROOT, 'bin', 'forkpoint')
const MODULES = join(ROOT, 'dist', 'cli', 'main.js')

const node =
  (cwd: string, ...args: string[]) =>
  () =>
    execFileSync(process.execPath, args, { cwd, stdio: 'ignore' })

export async function main(args: string[]): Promise<void> {
  const runs = args.includes('--quick') ? 5 : 20
  const ws = mkdtempSync(join(tmpdir(), 'fp-bench-cli-'))
  try {
    makeFixture(ws, { files: 1000, totalBytes: 10 * 1024 ** 2 })
    for (const line of [['init'], ['snapshot', '-m', 'base'], ['status']]) execFileSync(CLI, line, { cwd: ws, stdio: 'ignore' }) // warm: the index is up to date
    const rows: Row[] = []
    const floor = await measure(node(ws, '-e', '0'), { runs })
    rows.push({ command: 'node -e 0 (the floor)', bundle_ms: floor.median, modules_ms: floor.median, ratio: 1 })
    for (const line of [['--version'], ['status']]) {
      const r = await compare({ run: node(ws, CLI, ...line) }, { run: node(ws, MODULES, ...line) }, { runs, warmup: 2 })
      rows.push({ command: `forkpoint ${line.join(' ')}${line[0] === 'status' ? ' (warm, 1,000 files)' : ''}`, bundle_ms: r.a, modules_ms: r.b, ratio: r.ratio })
    }
    report('cli', 'CLI start: bin/forkpoint (the one-file bundle) vs node dist/cli/main.js (its ES modules) (median ms; ratio = bundle / modules)', rows)
  } finally {
    rmSync(ws, { recursive: true, force: true })
  }
}
