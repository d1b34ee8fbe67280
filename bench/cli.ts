/**
 * `npm run bench -- cli [--quick]`: what the CLI's start costs over Node's own (`node -e 0`,
 * measured in the same rounds): `forkpoint --version`, `forkpoint status` and a Claude Code
 * hook (`forkpoint claude hook`, a PreToolUse after a change) with the store's service
 * running, each as `bin/forkpoint` runs it (a CLI bundle made by scripts/bundleCli.mjs), and
 * `--version` and `status` also as the compiled ES modules the main bundle is made of (`node
 * dist/cli/main.js`), after `npm run build`. Every command runs once per round, so that a
 * machine whose load drifts weighs on every row alike. Wall and CPU medians; CPU time is what
 * a busy machine's waiting does not add to. The bundles stay in the build only while these
 * rows show they pay (docs/cli-startup.md).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Row, interleave, report } from './harness.js'
import { makeFixture } from './workspaceFixture.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const CLI = join(ROOT, 'bin', 'forkpoint')
const ES_MODULES = join(ROOT, 'dist', 'cli', 'main.js')

/** `node ARGS` in `cwd`, `input` on its stdin, to its exit (asynchronously: the bench's own timers keep running). */
function node(cwd: string, args: string[], input = ''): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['pipe', 'ignore', 'inherit'] })
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`node ${args.join(' ')} exited ${code}`))))
    child.stdin.end(input)
  })
}

/** `forkpoint serve` in `ws`, once its socket is there. */
async function startServe(ws: string): Promise<ChildProcess> {
  const serve = spawn(CLI, ['serve'], { cwd: ws, stdio: 'ignore' })
  const socket = join(ws, '.forkpoint', 'service.sock')
  for (let waited = 0; !existsSync(socket); waited += 50) {
    if (waited > 60_000 || serve.exitCode !== null) throw new Error(`forkpoint serve did not start in ${ws}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return serve
}

export async function main(args: string[]): Promise<void> {
  const runs = args.includes('--quick') ? 7 : 31
  const ws = mkdtempSync(join(tmpdir(), 'fp-bench-cli-'))
  let serve: ChildProcess | undefined
  try {
    makeFixture(ws, { files: 1000, totalBytes: 10 * 1024 ** 2 })
    for (const line of [['init'], ['snapshot', '-m', 'base'], ['status']]) execFileSync(CLI, line, { cwd: ws, stdio: 'ignore' }) // warm: the index is up to date
    serve = await startServe(ws)
    let n = 0
    const hookEvent = () => JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 'bench', cwd: ws, tool_name: 'Write', tool_input: { n }, tool_use_id: `t${n}` })
    const steps = {
      floor: { run: () => node(ws, ['-e', '0']) },
      version: { run: () => node(ws, [CLI, '--version']) },
      versionEs: { run: () => node(ws, [ES_MODULES, '--version']) },
      status: { run: () => node(ws, [CLI, 'status']) },
      statusEs: { run: () => node(ws, [ES_MODULES, 'status']) },
      hook: { before: () => writeFileSync(join(ws, 'd0', 's0', 'f0.txt'), `change ${++n}\n`), run: () => node(ws, [CLI, 'claude', 'hook'], hookEvent()) },
    }
    const r = await interleave(steps, { runs, warmup: 2 })
    const row = (command: string, how: string, step: keyof typeof steps): Row => ({
      command,
      how,
      wall_ms: r[step]!.median,
      cpu_ms: r[step]!.cpu,
      over_floor_ms: r[step]!.median - r['floor']!.median,
      over_floor_cpu_ms: r[step]!.cpu - r['floor']!.cpu,
    })
    const rows = [
      row('node -e 0 (the floor)', 'node', 'floor'),
      row('forkpoint --version', 'bin/forkpoint', 'version'),
      row('forkpoint --version', 'ES modules', 'versionEs'),
      row('forkpoint status (warm, 1,000 files)', 'bin/forkpoint', 'status'),
      row('forkpoint status (warm, 1,000 files)', 'ES modules', 'statusEs'),
      row('forkpoint claude hook (PreToolUse after a change, service running)', 'bin/forkpoint', 'hook'),
    ]
    report('cli', `CLI start over node -e 0: bin/forkpoint and the ES modules (median ms of ${runs} interleaved rounds)`, rows)
  } finally {
    if (serve && serve.exitCode === null) {
      const exited = new Promise((resolve) => serve!.on('exit', resolve))
      serve.kill()
      await exited
    }
    rmSync(ws, { recursive: true, force: true })
  }
}
