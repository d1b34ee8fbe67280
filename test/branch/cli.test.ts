import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI } from '../helpers/cli.js'
import { makeWorkspace } from '../helpers/tmp.js'

const cli = (dir: string, ...args: string[]) => spawnSync(CLI, ['-C', dir, ...args], { encoding: 'utf8' })

describe('forkpoint branch / commit / abort / run', () => {
  it('makes persistent branches that later commands commit, abort and run in', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    const made = cli(dir, 'branch', 'try', '--json')
    expect(made.status).toBe(0)
    const path = (JSON.parse(made.stdout) as { path: string }).path
    expect(readFileSync(join(path, 'a.txt'), 'utf8')).toBe('a')
    const child = JSON.parse(cli(dir, 'branch', 'try/inner', '--json').stdout) as { name: string; path: string }
    expect(child.name).toBe('try/inner')
    writeFileSync(join(child.path, 'inner.txt'), 'inner')
    expect(cli(dir, 'commit', 'try/inner').status).toBe(0)
    const run = cli(dir, 'run', '--branch', 'try', '--', 'sh', '-c', 'cat inner.txt; echo b > b.txt; exit 5')
    expect(run.status).toBe(5)
    expect(run.stdout).toBe('inner')
    const list = JSON.parse(cli(dir, 'branch', '--list', '--json').stdout) as { branches: Array<{ name: string }> }
    expect(list.branches.map((b) => b.name)).toEqual(['try'])
    const other = JSON.parse(cli(dir, 'branch', 'other', '--json').stdout) as { path: string }
    writeFileSync(join(other.path, 'b.txt'), 'other')
    expect(cli(dir, 'commit', 'try').status).toBe(0)
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('b\n')
    const conflict = cli(dir, 'commit', 'other', '--json')
    expect(conflict.status).toBe(3)
    expect(JSON.parse(conflict.stderr)).toMatchObject({ error: { code: 'ConflictError', data: { paths: ['b.txt'] } } })
    expect(cli(dir, 'abort', 'other').status).toBe(0)
    expect(cli(dir, 'commit', 'other').status).toBe(2)
    expect(existsSync(join(dir, '.forkpoint/branches/live')) && readFileSync('/proc/self/mountinfo', 'utf8').includes(dir)).toBe(false)
  })

  it('runs with limits and reports a timeout; refuses bad usage with exit 2', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    const timed = cli(dir, 'run', '--timeout', '300ms', '--json', '--', 'sleep', '30')
    expect(timed.status).toBe(137)
    expect(JSON.parse(timed.stdout)).toMatchObject({ timedOut: true, exitCode: 137 })
    expect(cli(dir, 'run', '--memory', 'lots', '--', 'true').status).toBe(2)
    expect(cli(dir, 'branch', '../evil').status).toBe(2)
    expect(cli(dir, 'branch', 'x', '--backend', 'zfs').status).toBe(2)
  })
})
