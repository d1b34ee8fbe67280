/**
 * `npm run bench -- service [--quick]`: a snapshot with one file changed through the
 * running service (`forkpoint serve`: an HTTP request on its Unix socket; the watcher
 * knows what changed), beside `git add -A && git commit` of the same change in a git
 * repository of the same files, interleaved, at 10k and 100k files; and, for reference,
 * the same snapshot by a CLI process with no service (a full scan, its stat cache warm);
 * and a Claude Code hook (`forkpoint claude hook`, a PreToolUse after a change) with the
 * service running against the same hook without it. Then the floor under the service's
 * snapshot: how long `@parcel/watcher` takes to report a write, after a quiet second and
 * right after another write (`service-watcher`). Then where a full scan stops paying
 * (`service-limit`): a served snapshot after a change scanned in full against taken from the
 * watcher's list, at 5k to 50k files, the services started in turn.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { answerClaudeHook } from '../src/adapters/claudeCode/answerHook.js'
import { startService } from '../src/service/httpService.js'
import { requirePackage } from '../src/util/requirePackage.js'
import { type Row, compare, measure, median, report } from './harness.js'
import { makeFixture } from './workspaceFixture.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const CLI = join(ROOT, 'bin', 'forkpoint')

function postSnapshot(socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'POST', path: '/v1/snapshot', headers: { 'content-type': 'application/json' } }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => (body += d.toString()))
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(body))))
    })
    req.on('error', reject)
    req.end('{}')
  })
}

function runHook(cwd: string, input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI, ['claude', 'hook'], { cwd, stdio: ['pipe', 'ignore', 'inherit'] })
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`claude hook exited ${code}`))))
    child.stdin.end(input)
  })
}

export async function main(args: string[]): Promise<void> {
  const quick = args.includes('--quick')
  const runs = quick ? 5 : 15
  const rows: Row[] = []
  for (const files of quick ? [10_000] : [10_000, 100_000]) {
    const ws = mkdtempSync(join(tmpdir(), 'fp-bench-service-'))
    const repo = mkdtempSync(join(tmpdir(), 'fp-bench-git-'))
    try {
      makeFixture(ws, { files, totalBytes: files * 1024 })
      makeFixture(repo, { files, totalBytes: files * 1024 })
      execFileSync(CLI, ['init'], { cwd: ws, stdio: 'ignore' })
      execFileSync(CLI, ['snapshot', '-m', 'base'], { cwd: ws, stdio: 'ignore' })
      const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', ...a], { cwd: repo, stdio: 'ignore' })
      git('init', '-q')
      git('add', '-A')
      git('commit', '-q', '-m', 'base')
      let n = 0
      const change = (dir: string) => () => writeFileSync(join(dir, 'd0', 's0', 'f0.txt'), `change ${++n}\n`)
      const service = await startService({ dir: ws, env: process.env, claudeHook: answerClaudeHook }) // as `forkpoint serve` starts it
      try {
        const socket = service.address.slice('unix:'.length)
        const hookEvent = (i: number) =>
          JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 'bench', cwd: ws, tool_name: 'Write', tool_input: { i }, tool_use_id: `t${i}` })
        // asynchronously: the service answering the hook runs in this process
        const hook = () => runHook(ws, hookEvent(n))
        const hookServed = await measure(hook, { runs: quick ? 3 : 7, before: change(ws) })
        const r = await compare(
          { before: change(ws), run: () => postSnapshot(socket) },
          {
            before: change(repo),
            run: () => {
              git('add', '-A')
              git('commit', '-q', '-m', 'x')
            },
          },
          { runs, warmup: 2 },
        )
        await service.close()
        // the CLI finds no service now: a process of its own and a full scan (its stat cache warm)
        const cli = await measure(() => execFileSync(CLI, ['snapshot'], { cwd: ws, stdio: 'ignore' }), { runs: quick ? 3 : 5, before: change(ws) })
        const hookAlone = await measure(hook, { runs: quick ? 3 : 7, before: change(ws) })
        rows.push({
          files,
          service_ms: r.a,
          git_add_commit_ms: r.b,
          ratio: r.ratio,
          cli_without_service_ms: cli.median,
          claude_hook_with_service_ms: hookServed.median,
          claude_hook_without_service_ms: hookAlone.median,
        })
      } catch (err) {
        await service.close()
        throw err
      }
    } finally {
      rmSync(ws, { recursive: true, force: true })
      rmSync(repo, { recursive: true, force: true })
    }
  }
  report('service', 'Snapshot with one file changed: through forkpoint serve vs git add -A && git commit (median ms; ratio = service / git)', rows)
  report('service-watcher', "@parcel/watcher: from a file's write to its report (ms)", await watcherDelays(quick ? 3 : 10))
  report(
    'service-limit',
    "A served snapshot after a one-file change: scanned in full against from the watcher's list (median ms; ratio = full / list)",
    await fullScanAgainstList(quick ? [2_000, 5_000] : [5_000, 10_000, 20_000, 50_000], quick ? 3 : 9),
  )
}

/**
 * At each size, `rounds` rounds of: a service that scans in full, then one that takes the
 * watcher's list, each snapshotting once to settle and once, measured, after a change.
 * What `SCAN_IN_FULL_UP_TO` is chosen by (docs/service.md).
 */
async function fullScanAgainstList(sizes: number[], rounds: number): Promise<Row[]> {
  const rows: Row[] = []
  for (const files of sizes) {
    const ws = mkdtempSync(join(tmpdir(), 'fp-bench-limit-'))
    try {
      makeFixture(ws, { files, totalBytes: files * 1024 })
      execFileSync(CLI, ['init'], { cwd: ws, stdio: 'ignore' })
      execFileSync(CLI, ['snapshot', '-m', 'base'], { cwd: ws, stdio: 'ignore' })
      const ms: Record<'full' | 'list', number[]> = { full: [], list: [] }
      let n = 0
      for (let round = 0; round < rounds; round++) {
        for (const [way, scanInFullUpTo] of [
          ['full', Number.MAX_SAFE_INTEGER],
          ['list', 0],
        ] as const) {
          const service = await startService({ dir: ws, scanInFullUpTo })
          try {
            const socket = service.address.slice('unix:'.length)
            await postSnapshot(socket)
            writeFileSync(join(ws, 'd0', 's0', 'f0.txt'), `change ${++n}\n`)
            const start = performance.now()
            await postSnapshot(socket)
            ms[way].push(performance.now() - start)
          } finally {
            await service.close()
          }
        }
      }
      const full = median(ms.full)
      const list = median(ms.list)
      rows.push({ files, full_scan_ms: full, watcher_list_ms: list, ratio: full / list, rounds })
    } finally {
      rmSync(ws, { recursive: true, force: true })
    }
  }
  return rows
}

/** How long the watcher takes to report a write: the first after a quiet second, and one right after it. */
async function watcherDelays(rounds: number): Promise<Row[]> {
  const watcher = requirePackage('@parcel/watcher') as typeof import('@parcel/watcher')
  const dir = mkdtempSync(join(tmpdir(), 'fp-bench-watcher-'))
  const waiting = new Map<string, () => void>()
  const subscription = await watcher.subscribe(dir, (_err, events) => {
    for (const event of events) waiting.get(event.path)?.()
  })
  const reported = async (name: string): Promise<number> => {
    const path = join(dir, name)
    const seen = new Promise<void>((resolve) => waiting.set(path, resolve))
    const start = performance.now()
    writeFileSync(path, `${start}\n`)
    await seen
    waiting.delete(path)
    return performance.now() - start
  }
  const first: number[] = []
  const next: number[] = []
  try {
    for (let i = 0; i < rounds; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1100))
      first.push(await reported(`quiet-${i}`))
      next.push(await reported(`next-${i}`))
    }
  } finally {
    await subscription.unsubscribe()
    rmSync(dir, { recursive: true, force: true })
  }
  const row = (write: string, ms: number[]): Row => {
    const sorted = [...ms].sort((a, b) => a - b)
    return { write, median_ms: sorted[Math.floor(sorted.length / 2)]!, min_ms: sorted[0]!, max_ms: sorted.at(-1)!, rounds }
  }
  return [row('the first after a quiet second', first), row('right after another', next)]
}
