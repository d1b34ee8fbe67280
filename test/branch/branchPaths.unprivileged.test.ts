import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type Runner, forkpoint, fuseNamespace, runAs, toolWorkspace, toolsIn } from './toolsInBranch.js'

/**
 * Branch paths for a user who is not root, run as root through `setpriv` as `nobody`, each
 * case in a private mount namespace whose /dev/fuse has the permissions the case wants
 * (this host's own is root's alone, mode 0600; Debian's udev makes it 0666), so the host
 * is left as it is: with FUSE usable, fuse-overlayfs mounts the branch where nobody's
 * tools see it; without, `forkpoint branch` says so and `forkpoint shell` works instead.
 */
let stop: (() => void) | undefined
afterEach(() => stop?.())

describe.runIf(process.getuid?.() === 0)('branch paths every tool can use (nobody)', () => {
  it('with a /dev/fuse it may open: fuse-overlayfs at a path where git status, node and npm test work', async () => {
    const ns = await fuseNamespace('666')
    stop = () => ns.kill()
    const nobody: Runner = { user: 'nobody', namespaceOf: ns.pid }
    const dir = await toolWorkspace(nobody)
    const made = forkpoint(nobody, dir, 'branch', 'tools')
    expect([made.status, made.stderr]).toEqual([0, ''])
    const path = made.stdout.trim()
    expect(path).not.toMatch(/^\/proc\//)
    expect(mountsIn(ns.pid)).toContain(`${path} fuse.fuse-overlayfs`)
    expect(runAs(nobody, path, ['realpath', '.']).stdout).toBe(`${path}\n`)
    const { git, node, npm, changed } = toolsIn(nobody, path)
    expect([git.status, git.stderr, git.stdout]).toEqual([0, '', ''])
    expect([node.status, node.stdout]).toEqual([0, `script ran in ${path}\n`])
    expect([npm.status, npm.stdout]).toEqual([0, `script ran in ${path}\n`])
    expect(changed.stdout).toBe('?? out.txt\n')
    const run = forkpoint(nobody, dir, 'run', '--branch', 'tools', '--', 'sh', '-c', 'cat out.txt; rm script.js')
    expect([run.status, run.stdout]).toEqual([0, 'ran\n'])
    // mounted again after its mount went behind forkpoint's back
    expect(runAs(nobody, dir, ['fusermount3', '-u', path]).status).toBe(0)
    expect(mountsIn(ns.pid)).not.toContain(path)
    expect(forkpoint(nobody, dir, 'commit', 'tools').status).toBe(0)
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('ran\n')
    expect(existsSync(join(dir, 'script.js'))).toBe(false)
    expect(mountsIn(ns.pid)).not.toContain(path)
  })

  it('where nothing can mount, says so, prints no path, and forkpoint shell works in the branch', async () => {
    const ns = await fuseNamespace('600')
    stop = () => ns.kill()
    const nobody: Runner = { user: 'nobody', namespaceOf: ns.pid }
    const dir = await toolWorkspace(nobody)
    const made = forkpoint(nobody, dir, 'branch', 'tools')
    expect(made.status).toBe(0)
    expect(made.stdout).toBe('')
    expect(made.stderr).toMatch(/cannot be mounted where other tools see it.*forkpoint shell tools/)
    const json = JSON.parse(forkpoint(nobody, dir, 'branch', '--list', '--json').stdout) as { branches: Array<{ view: string }> }
    expect(json.branches).toMatchObject([{ view: 'namespace' }])
    expect(forkpoint(nobody, dir, 'branch', '--list').stdout).toBe('tools\toverlay\t(no path other tools can use: forkpoint shell tools)\n')
    const shell = forkpoint(nobody, dir, 'shell', 'tools', '-c', 'git status --porcelain && node script.js && npm test --silent')
    expect([shell.status, shell.stdout]).toEqual([0, `script ran in ${realpathSync(dir)}\n`.repeat(2)])
    expect(forkpoint(nobody, dir, 'commit', 'tools').status).toBe(0)
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('ran\n')
    const elsewhere = `${dir}-elsewhere`
    const atPath = forkpoint(nobody, dir, 'branch', 'other', '--path', elsewhere)
    expect([atPath.status, atPath.stderr]).toEqual([2, expect.stringMatching(/fuse-overlayfs/)])
    expect(existsSync(elsewhere)).toBe(false)
  })
})

function mountsIn(pid: number): string {
  return readFileSync(`/proc/${pid}/mounts`, 'utf8')
}
