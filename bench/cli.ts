/**
 * `npm run bench -- cli [--quick]`: what the CLI's start costs over Node's own (`node -e 0`,
 * measured in the same rounds): `forkpoint --version`, `forkpoint status` and a Claude Code
 * hook (`forkpoint claude hook`, a PreToolUse after a change) with the store's service
 * running (the hook is its client: the service does the work) and in a workspace with none
 * (the hook does the work in its own process), each as `bin/forkpoint` runs it (a CLI bundle
 * made by scripts/bundleCli.mjs), and
 * `--version` and `status` also as the compiled ES modules the main bundle is made of (`node
 * dist/cli/main.js`), after `npm run build`. Every command runs once per round, so that a
 * machine whose load drifts weighs on every row alike. Wall and CPU medians; CPU time is what
 * a busy machine's waiting does not add to. The bundles stay in the build only while these
 * rows show they pay (docs/cli-startup.md). The service's own CPU time for a hook (from
 * /proc, in a loop of hooks after the rounds) is a row of its own: the client's CPU time
 * leaves it out.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Row, interleave, processCpuMs, report } from './harness.js'
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

/** Median wall and service CPU of `runs` hooks, each after a change: what the service spends answering one. */
async function servedHooks(runs: number, serve: ChildProcess, hook: () => Promise<void>, change: () => void): Promise<{ wall: number; cpu: number }> {
  const wall: number[] = []
  const cpu: number[] = []
  for (let i = 0; i < runs; i++) {
    change()
    const [c0, t0] = [processCpuMs(serve.pid!), process.hrtime.bigint()]
    await hook()
    wall.push(Number(process.hrtime.bigint() - t0) / 1e6)
    cpu.push(processCpuMs(serve.pid!) - c0)
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!
  return { wall: median(wall), cpu: median(cpu) }
}

export async function main(args: string[]): Promise<void> {
  const runs = args.includes('--quick') ? 7 : 31
  const ws = mkdtempSync(join(tmpdir(), 'fp-bench-cli-'))
  const alone = mkdtempSync(join(tmpdir(), 'fp-bench-cli-alone-'))
  let serve: ChildProcess | undefined
  try {
    for (const dir of [ws, alone]) {
      makeFixture(dir, { files: 1000, totalBytes: 10 * 1024 ** 2 })
      for (const line of [['init'], ['snapshot', '-m', 'base'], ['status']]) execFileSync(CLI, line, { cwd: dir, stdio: 'ignore' }) // warm: the index is up to date
    }
    serve = await startServe(ws)
    let n = 0
    const hookEvent = (cwd = ws) => JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 'bench', cwd, tool_name: 'Write', tool_input: { n }, tool_use_id: `t${n}` })
    const change = (dir: string) => () => writeFileSync(join(dir, 'd0', 's0', 'f0.txt'), `change ${++n}\n`)
    const steps = {
      floor: { run: () => node(ws, ['-e', '0']) },
      version: { run: () => node(ws, [CLI, '--version']) },
      versionEs: { run: () => node(ws, [ES_MODULES, '--version']) },
      status: { run: () => node(ws, [CLI, 'status']) },
      statusEs: { run: () => node(ws, [ES_MODULES, 'status']) },
      hook: { before: change(ws), run: () => node(ws, [CLI, 'claude', 'hook'], hookEvent()) },
      hookAlone: { before: change(alone), run: () => node(alone, [CLI, 'claude', 'hook'], hookEvent(alone)) },
    }
    const r = await interleave(steps, { runs, warmup: 2 })
    const served = await servedHooks(runs, serve, () => node(ws, [CLI, 'claude', 'hook'], hookEvent()), change(ws))
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
      row('forkpoint claude hook (PreToolUse after a change, service running)', 'bin/forkpoint, the service does the work', 'hook'),
      row('forkpoint claude hook (PreToolUse after a change, no service)', 'bin/forkpoint, in its own process', 'hookAlone'),
      {
        command: 'forkpoint claude hook (PreToolUse after a change, service running)',
        how: "the service's CPU for one (from /proc), hooks in a row",
        wall_ms: served.wall,
        cpu_ms: served.cpu,
        over_floor_ms: '',
        over_floor_cpu_ms: '',
      },
    ]
    report('cli', `CLI start over node -e 0: bin/forkpoint and the ES modules (median ms of ${runs} interleaved rounds)`, rows)
  } finally {
    if (serve && serve.exitCode === null) {
      const exited = new Promise((resolve) => serve!.on('exit', resolve))
      serve.kill()
      await exited
    }
    for (const dir of [ws, alone]) rmSync(dir, { recursive: true, force: true })
  }
}
