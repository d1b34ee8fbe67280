import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from '../helpers/tmp.js'
import { type Runner, forkpoint, toolWorkspace, toolsIn } from './toolsInBranch.js'

/**
 * `forkpoint branch NAME` prints a path that git, node and npm work in: a directory of the
 * host's own file system (here, as root: kernel overlayfs mounted in the host's mount
 * namespace), not a `/proc/<pid>/root/...` path whose real path is an empty directory.
 * As `nobody`: branchPaths.unprivileged.test.ts.
 */
const root: Runner = { user: 'root' }
const mounted = (path: string): boolean =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === path)

describe.runIf(process.getuid?.() === 0)('branch paths every tool can use (root)', () => {
  it('prints a path where git status, node script.js and npm test work, and commit brings their changes back', async () => {
    const dir = await toolWorkspace(root)
    const made = forkpoint(root, dir, 'branch', 'tools')
    expect(made.status).toBe(0)
    const path = made.stdout.trim()
    expect(path).not.toMatch(/^\/proc\//)
    expect(realpathSync(path)).toBe(path)
    expect(mounted(path)).toBe(true)
    const { git, node, npm, changed } = toolsIn(root, path)
    expect([git.status, git.stderr, git.stdout]).toEqual([0, '', ''])
    expect([node.status, node.stdout]).toEqual([0, `script ran in ${path}\n`])
    expect([npm.status, npm.stdout]).toEqual([0, `script ran in ${path}\n`])
    expect(changed.stdout).toBe('?? out.txt\n')
    expect(existsSync(join(dir, 'out.txt'))).toBe(false)
    // the sandboxed run sees the branch as tools left it
    const run = forkpoint(root, dir, 'run', '--branch', 'tools', '--', 'cat', 'out.txt')
    expect([run.status, run.stdout]).toEqual([0, 'ran\n'])
    expect(forkpoint(root, dir, 'commit', 'tools').status).toBe(0)
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('ran\n')
    expect(mounted(path)).toBe(false)
    expect(existsSync(path)).toBe(false)
  })

  it('mounts the branch again when its mount is gone (a reboot), with every change it had', async () => {
    const dir = await toolWorkspace(root)
    const path = forkpoint(root, dir, 'branch', 'tools').stdout.trim()
    writeFileSync(join(path, 'kept.txt'), 'kept')
    expect(spawnSync('umount', [path]).status).toBe(0) // behind forkpoint's back
    expect(existsSync(join(path, 'kept.txt'))).toBe(false)
    const list = JSON.parse(forkpoint(root, dir, 'branch', '--list', '--json').stdout) as { branches: Array<{ path: string; view: string }> }
    expect(list.branches).toMatchObject([{ path, view: 'host' }])
    expect(readFileSync(join(path, 'kept.txt'), 'utf8')).toBe('kept')
    expect(toolsIn(root, path).git.status).toBe(0)
    // and again, found gone by the commit itself
    expect(spawnSync('umount', [path]).status).toBe(0)
    expect(forkpoint(root, dir, 'commit', 'tools').status).toBe(0)
    expect(readFileSync(join(dir, 'kept.txt'), 'utf8')).toBe('kept')
    expect(mounted(path)).toBe(false)
  })

  it('mounts at --path DIR, and takes it away on abort; refuses a DIR inside the workspace or not empty', async () => {
    const dir = await toolWorkspace(root)
    const path = join(tempDir('branch-path'), 'tools')
    const made = forkpoint(root, dir, 'branch', 'tools', '--path', path)
    expect([made.status, made.stdout]).toEqual([0, `${path}\n`])
    const { git, npm } = toolsIn(root, path)
    expect([git.status, npm.status]).toEqual([0, 0])
    expect(forkpoint(root, dir, 'abort', 'tools').status).toBe(0)
    expect(mounted(path)).toBe(false)
    expect(existsSync(path)).toBe(false)
    expect(existsSync(join(dir, 'out.txt'))).toBe(false)
    const inside = forkpoint(root, dir, 'branch', 'in', '--path', join(dir, 'sub'))
    expect([inside.status, inside.stderr]).toEqual([2, expect.stringMatching(/inside the workspace/)])
    expect(existsSync(join(dir, 'sub'))).toBe(false)
    const taken = forkpoint(root, dir, 'branch', 'tools', '--path', path)
    expect(forkpoint(root, dir, 'branch', 'tools', '--path', `${path}-2`).status).toBe(2) // the name is taken
    expect(existsSync(`${path}-2`)).toBe(false)
    expect([taken.status, forkpoint(root, dir, 'abort', 'tools').status]).toEqual([0, 0])
    const full = tempDir('full')
    writeFileSync(join(full, 'x'), 'x')
    expect(forkpoint(root, dir, 'branch', 'full', '--path', full).stderr).toMatch(/not empty/)
  })

  it('a branch of a branch gets a host path too, committed into its parent', async () => {
    const dir = await toolWorkspace(root)
    const parent = forkpoint(root, dir, 'branch', 'tools').stdout.trim()
    writeFileSync(join(parent, 'p.txt'), 'p')
    const child = forkpoint(root, dir, 'branch', 'tools/inner').stdout.trim()
    expect(toolsIn(root, child).node.stdout).toBe(`script ran in ${child}\n`)
    expect(readFileSync(join(child, 'p.txt'), 'utf8')).toBe('p')
    expect(forkpoint(root, dir, 'commit', 'tools/inner').status).toBe(0)
    expect(readFileSync(join(parent, 'out.txt'), 'utf8')).toBe('ran\n')
    expect(forkpoint(root, dir, 'commit', 'tools').status).toBe(0)
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('ran\n')
    expect(mounted(child) || mounted(parent)).toBe(false)
  })

  it("forkpoint shell NAME -c runs in the branch at the workspace's own path", async () => {
    const dir = await toolWorkspace(root)
    forkpoint(root, dir, 'branch', 'tools')
    const shell = forkpoint(root, dir, 'shell', 'tools', '-c', 'git status --porcelain && node script.js && npm test --silent && exit 7')
    expect([shell.status, shell.stdout]).toEqual([7, `script ran in ${dir}\n`.repeat(2)])
    expect(existsSync(join(dir, 'out.txt'))).toBe(false)
    expect(forkpoint(root, dir, 'commit', 'tools').status).toBe(0)
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('ran\n')
    expect(forkpoint(root, dir, 'shell', 'nope', '-c', 'true').status).toBe(2)
  })
})
