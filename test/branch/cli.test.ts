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

  it('leaves a commit that meets conflicts in progress, with markers, --continue and --abort', async () => {
    const dir = await makeWorkspace({ 'Readme.md': '1\n2\n3\n' })
    const { path } = JSON.parse(cli(dir, 'branch', 'c1', '--json').stdout) as { path: string }
    writeFileSync(join(path, 'Readme.md'), '1\nbranch\n3\n')
    writeFileSync(join(dir, 'Readme.md'), '1\nparent\n3\n')
    const stopped = cli(dir, 'commit', 'c1')
    expect(stopped.status).toBe(3)
    expect(stopped.stderr).toMatch(/1 path also changed in the parent.*Readme\.md.*'forkpoint commit c1 --continue', or 'forkpoint commit c1 --abort'/)
    expect(readFileSync(join(dir, 'Readme.md'), 'utf8')).toContain('<<<<<<< parent\nparent\n||||||| base\n2\n=======\nbranch\n>>>>>>> c1\n')
    expect(cli(dir, 'status').stdout).toContain('committing branch c1 with 1 conflict (Readme.md)')
    expect(cli(dir, 'commit', 'c1', '--abort').status).toBe(0)
    expect(readFileSync(join(dir, 'Readme.md'), 'utf8')).toBe('1\nparent\n3\n')
    expect(cli(dir, 'commit', 'c1').status).toBe(3)
    const marked = cli(dir, 'commit', 'c1', '--continue')
    expect([marked.status, marked.stderr]).toEqual([3, expect.stringContaining('conflict markers remain in Readme.md')])
    writeFileSync(join(dir, 'Readme.md'), '1\nboth\n3\n')
    expect(cli(dir, 'commit', 'c1', '--continue').status).toBe(0)
    expect(readFileSync(join(dir, 'Readme.md'), 'utf8')).toBe('1\nboth\n3\n')
    expect(cli(dir, 'branch', '--list', '--json').stdout).not.toContain('c1')
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
