/**
 * `npm run bench -- cli [--quick]`: what the CLI's start costs over Node's own, and whether
 * the one-file bundle pays: each command line as `bin/forkpoint` runs it (dist/cli/main.cjs,
 * made by scripts/bundleCli.mjs) against the compiled ES modules it is made of (`node
 * dist/cli/main.js`), after `npm run build`. Wall and CPU medians; CPU time is what a busy
 * machine's waiting does not add to. The bundle stays in the build only while these rows
 * show it pays (docs/cli-startup.md).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Row, measure, report } from './harness.js'
import { makeFixture } from './workspaceFixture.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const CLI = join(ROOT, 'bin', 'forkpoint')
const VARIANTS = [
  ['bin/forkpoint (the bundle)', CLI],
  ['ES modules', join(ROOT, 'dist', 'cli', 'main.js')],
] as const

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
    const floor = await measure(node(ws, '-e', '0'), { runs, warmup: 2 })
    const rows: Row[] = [{ command: 'node -e 0 (the floor)', how: 'node', wall_ms: floor.median, cpu_ms: floor.cpu, over_floor_ms: 0, over_floor_cpu_ms: 0 }]
    for (const line of [['--version'], ['status']]) {
      for (const [how, entry] of VARIANTS) {
        const r = await measure(node(ws, entry, ...line), { runs, warmup: 2 })
        const command = `forkpoint ${line.join(' ')}${line[0] === 'status' ? ' (warm, 1,000 files)' : ''}`
        rows.push({ command, how, wall_ms: r.median, cpu_ms: r.cpu, over_floor_ms: r.median - floor.median, over_floor_cpu_ms: r.cpu - floor.cpu })
      }
    }
    report('cli', 'CLI start over node -e 0: bin/forkpoint (the bundle) and the ES modules (median ms)', rows)
  } finally {
    rmSync(ws, { recursive: true, force: true })
  }
}
