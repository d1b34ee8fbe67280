import { spawn, spawnSync } from 'node:child_process'
import { chownSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI } from '../helpers/cli.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { eventually, expectNothingLeftIn, processesWith } from './leftovers.js'

const forkpoint = (cwd: string, args: string[], asUser?: 'nobody') => {
  const argv = asUser ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', CLI, ...args] : [CLI, ...args]
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}
const project = () => makeWorkspace({ 'calc.js': 'export const add = (a, b) => a - b\n', 'test.sh': 'grep -q "a + b" calc.js\n' })

describe('forkpoint speculate', () => {
  it('commits the first command to exit 0 and prints the candidates table', async () => {
    const dir = await project()
    const r = forkpoint(dir, ['speculate', '--parallel', '3', '-c', 'sleep 20', '-c', "sleep 1 && sed -i 's/a - b/a + b/' calc.js && sh test.sh", '-c', 'exit 7'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/#\s+status\s+score\s+time\s+detail/)
    expect(r.stdout).toMatch(/\*1\s+succeeded\s+1\s/)
    expect(r.stdout).toMatch(/ 0\s+cancelled/)
    expect(r.stdout).toMatch(/ 2\s+failed\s+0\s.*exit 7/)
    expect(r.stdout).toMatch(/winner: #1, committed \(1 written, 0 deleted\)/)
    expect(readFileSync(join(dir, 'calc.js'), 'utf8')).toContain('a + b')
    expectNothingLeftIn(dir)
  })

  it('exits 1 with nothing committed when every command fails, and prints JSON with --json', async () => {
    const dir = await project()
    const r = forkpoint(dir, ['speculate', '-c', 'exit 1', '-c', 'sleep 60', '--timeout', '5s', '--json'])
    expect(r.code).toBe(1)
    const out = JSON.parse(r.stdout)
    expect(out).toMatchObject({ schemaVersion: 1, pattern: 'speculate', committed: false })
    expect(out.results.map((x: { status: string }) => x.status)).toEqual(['failed', 'timeout'])
    expect(readFileSync(join(dir, 'calc.js'), 'utf8')).toContain('a - b')
    expectNothingLeftIn(dir)
  })

  it('exits 2 on usage errors', async () => {
    const dir = await project()
    expect(forkpoint(dir, ['speculate']).code).toBe(2)
    const bad = forkpoint(dir, ['speculate', '-c', 'true', '--parallel', '0'])
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/speculate: parallel: Too small: expected number to be >=1/)])
    expect(forkpoint(dir, ['speculate', '-c', 'true', '--timeout', 'soon']).code).toBe(2)
  })

  it('runs unprivileged, through user-namespace branches', async () => {
    const dir = await project()
    chownSync(dir, 65534, 65534)
    for (const f of ['calc.js', 'test.sh']) chownSync(join(dir, f), 65534, 65534)
    const r = forkpoint(dir, ['speculate', '-c', 'exit 3', '-c', "sed -i 's/a - b/a + b/' calc.js"], 'nobody')
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(readFileSync(join(dir, 'calc.js'), 'utf8')).toContain('a + b')
    expect(processesWith(join(dir, '.forkpoint'))).toEqual([])
    expectNothingLeftIn(dir)
  })
})

describe('forkpoint explore', () => {
  it('runs N attempts with FORKPOINT_ATTEMPT, scores each with --score, and commits the best', async () => {
    const dir = await project()
    const r = forkpoint(dir, ['explore', '-n', '4', '--score', 'cat score', '--json', '--', 'sh', '-c', 'echo $(( (FORKPOINT_ATTEMPT + 2) % 4 )) > score'])
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.results.map((x: { score: number }) => x.score)).toEqual([2, 3, 0, 1])
    expect(out.winner).toBe(1)
    expect(readFileSync(join(dir, 'score'), 'utf8')).toBe('3\n')
    expectNothingLeftIn(dir)
  })

  it('defaults the score to exit 0 = 1, and exits 1 when no attempt succeeds', async () => {
    const dir = await project()
    const r = forkpoint(dir, ['explore', '-n', '2', '--', 'exit 1'])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/no candidate succeeded: nothing committed/)
    expect(forkpoint(dir, ['explore', '-n', 'x', '--', 'true']).code).toBe(2)
  })

  it('on SIGINT kills every attempt, aborts every branch and exits 1', async () => {
    const dir = await project()
    const marker = `41.${process.pid}3`
    const child = spawn(CLI, ['explore', '-n', '2', '--', `sleep ${marker}`], { cwd: dir, stdio: 'pipe' })
    let stderr = ''
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    expect(await eventually(() => processesWith(marker).length >= 2, 30_000)).toBe(true)
    child.kill('SIGINT')
    const code = await new Promise<number | null>((r) => child.on('exit', r))
    expect([code, stderr]).toEqual([1, expect.stringMatching(/bestOfN was cancelled/)])
    expect(processesWith(marker)).toEqual([])
    expectNothingLeftIn(dir)
  })
})
