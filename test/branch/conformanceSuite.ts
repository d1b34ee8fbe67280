import { execFileSync, spawn } from 'node:child_process'
import { existsSync, promises as fs, readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { BranchStaleError, ConflictError, UnsafePathError, UnsupportedFileError, Workspace } from '../../src/index.js'
import type { BackendName } from '../../src/index.js'
import { makeWorkspace } from '../helpers/tmp.js'

/** Nothing of the store's branches is left: no branch directory, no mount, no holder process. */
export function expectNothingLeft(ws: Workspace): void {
  const live = join(ws.store.root, 'branches', 'live')
  expect(existsSync(live) ? readdirSync(live) : []).toEqual([])
  expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(ws.store.root)
  const holders = readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(ws.store.root) && !readFileSync(`/proc/${p}/stat`, 'utf8').includes(') Z ')
      } catch {
        return false
      }
    })
  expect(holders).toEqual([])
}

const read = (path: string) => readFileSync(path, 'utf8')

/**
 * The one suite every backend passes, as root and as an unprivileged user. `base()`
 * gives the directory to make workspaces in (a reflink file system for `reflink`).
 */
export function conformance(backend: BackendName, base: () => string | undefined): void {
  const open = async (files: Record<string, Parameters<typeof makeWorkspace>[0][string]>) => {
    const parent = base()
    const dir = parent ? await fs.mkdtemp(join(parent, 'ws-')) : undefined
    return Workspace.open({ dir: await makeWorkspace(files, dir), backend })
  }
  const std = { 'a.txt': 'a', 'src/main.ts': 'main', 'src/lib/util.ts': 'util', 'docs/x.md': 'x' }

  it('creates a branch showing the workspace, isolated from it', async () => {
    const ws = await open(std)
    const b = await ws.branch('one')
    expect(b.backend).toBe(backend)
    expect(statSync(b.path).isDirectory()).toBe(true)
    expect(read(join(b.path, 'src/lib/util.ts'))).toBe('util')
    expect(readdirSync(b.path)).not.toContain('.forkpoint')
    await fs.writeFile(join(b.path, 'a.txt'), 'changed')
    expect(read(join(ws.dir, 'a.txt'))).toBe('a')
    await fs.writeFile(join(ws.dir, 'docs/x.md'), 'parent edit')
    expect(read(join(b.path, 'docs/x.md'))).toBe('x') // a stable base, not the live parent
    await b.abort()
    expectNothingLeft(ws)
  })

  it('commits writes, new files and new directories', async () => {
    const ws = await open(std)
    const b = await ws.branch('w')
    await fs.writeFile(join(b.path, 'src/main.ts'), 'main v2')
    await fs.mkdir(join(b.path, 'new/deep'), { recursive: true })
    await fs.writeFile(join(b.path, 'new/deep/file.txt'), 'deep')
    const result = await b.commit()
    expect(result.written).toEqual(['new', 'src/main.ts'])
    expect(read(join(ws.dir, 'src/main.ts'))).toBe('main v2')
    expect(read(join(ws.dir, 'new/deep/file.txt'))).toBe('deep')
    expect(b.status).toBe('committed')
    expectNothingLeft(ws)
  })

  it('commits deletions of files and whole directories', async () => {
    const ws = await open(std)
    const b = await ws.branch('d')
    await fs.rm(join(b.path, 'a.txt'))
    await fs.rm(join(b.path, 'src/lib'), { recursive: true })
    expect((await b.changes()).map((c) => `${c.type} ${c.path}`)).toEqual(['delete a.txt', 'delete src/lib'])
    await b.commit()
    expect(existsSync(join(ws.dir, 'a.txt'))).toBe(false)
    expect(existsSync(join(ws.dir, 'src/lib'))).toBe(false)
    expect(read(join(ws.dir, 'src/main.ts'))).toBe('main')
  })

  it('commits renames of files and directories', async () => {
    const ws = await open(std)
    const b = await ws.branch('r')
    await fs.rename(join(b.path, 'a.txt'), join(b.path, 'b.txt'))
    // A directory of the base: overlayfs without redirect_dir says EXDEV to rename(2), and mv copies.
    execFileSync('mv', [join(b.path, 'src'), join(b.path, 'lib')])
    await b.commit()
    expect(readdirSync(ws.dir).sort()).toEqual(['.forkpoint', 'b.txt', 'docs', 'lib'])
    expect(read(join(ws.dir, 'lib/lib/util.ts'))).toBe('util')
  })

  it('commits a chmod', async () => {
    const ws = await open({ ...std, 'run.sh': { content: '#!/bin/sh\n', mode: 0o644 } })
    const b = await ws.branch('c')
    await fs.chmod(join(b.path, 'run.sh'), 0o755)
    expect(await b.changes()).toEqual([{ path: 'run.sh', type: 'put' }])
    await b.commit()
    expect(statSync(join(ws.dir, 'run.sh')).mode & 0o111).not.toBe(0)
  })

  it('commits symlinks, never following them; one leading out only when allowed', async () => {
    const ws = await open({ ...std, 'old-link': { symlink: 'a.txt' } })
    const b = await ws.branch('s')
    await fs.symlink('src/main.ts', join(b.path, 'link'))
    await fs.symlink('/etc/passwd', join(b.path, 'outside'))
    await fs.rm(join(b.path, 'old-link'))
    const refused = await b.commit().catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(UnsafePathError)
    expect(refused).toMatchObject({ exitCode: 5, data: { path: 'outside' } })
    expect(existsSync(join(ws.dir, 'link'))).toBe(false)
    await b.commit({ allowExternalSymlinks: true })
    expect(await fs.readlink(join(ws.dir, 'link'))).toBe('src/main.ts')
    expect(await fs.readlink(join(ws.dir, 'outside'))).toBe('/etc/passwd')
    expect(existsSync(join(ws.dir, 'old-link'))).toBe(false)
  })

  it("refuses a symlink that leads out through the branch's own links (a -> ., c -> a/a/../../..)", async () => {
    const ws = await open(std)
    const b = await ws.branch('chain')
    await fs.mkdir(join(b.path, 'new'))
    await fs.symlink('.', join(b.path, 'new/a'))
    await fs.symlink('a/a/a/../../../../etc', join(b.path, 'new/c'))
    await expect(b.commit()).rejects.toMatchObject({ code: 'UnsafePathError', data: { path: 'new/c' } })
    expect(existsSync(join(ws.dir, 'new'))).toBe(false)
    await b.abort()
  })

  it('commits a directory replaced wholesale (opaque) and a type change', async () => {
    const ws = await open(std)
    const b = await ws.branch('o')
    await fs.rm(join(b.path, 'src'), { recursive: true })
    await fs.mkdir(join(b.path, 'src'))
    await fs.writeFile(join(b.path, 'src/only.ts'), 'only')
    await fs.rm(join(b.path, 'docs'), { recursive: true })
    await fs.writeFile(join(b.path, 'docs'), 'now a file')
    await b.commit()
    expect(readdirSync(join(ws.dir, 'src'))).toEqual(['only.ts'])
    expect(read(join(ws.dir, 'docs'))).toBe('now a file')
  })

  it('nests: a child commits into its parent, which commits into the workspace', async () => {
    const ws = await open(std)
    const parent = await ws.branch('p')
    await fs.writeFile(join(parent.path, 'a.txt'), 'from parent')
    await fs.rm(join(parent.path, 'docs'), { recursive: true })
    const child = await parent.branch('c')
    expect(child.name).toBe('p/c')
    expect(child.parent).toBe(parent)
    expect(read(join(child.path, 'a.txt'))).toBe('from parent')
    expect(existsSync(join(child.path, 'docs'))).toBe(false)
    await fs.writeFile(join(child.path, 'src/main.ts'), 'from child')
    await fs.writeFile(join(parent.path, 'late.txt'), 'parent after child was made')
    expect(existsSync(join(child.path, 'late.txt'))).toBe(false)
    expect(read(join(ws.dir, 'src/main.ts'))).toBe('main')
    await child.commit()
    expect(read(join(parent.path, 'src/main.ts'))).toBe('from child')
    expect(read(join(ws.dir, 'src/main.ts'))).toBe('main')
    await parent.commit()
    expect(read(join(ws.dir, 'src/main.ts'))).toBe('from child')
    expect(read(join(ws.dir, 'a.txt'))).toBe('from parent')
    expect(read(join(ws.dir, 'late.txt'))).toBe('parent after child was made')
    expect(existsSync(join(ws.dir, 'docs'))).toBe(false)
    expectNothingLeft(ws)
  })

  it('aborts (also a parent with children) leaving nothing behind', async () => {
    const ws = await open(std)
    const b = await ws.branch('gone')
    await fs.writeFile(join(b.path, 'junk.txt'), 'junk')
    const child = await b.branch('kid')
    await fs.writeFile(join(child.path, 'more.txt'), 'more')
    await b.abort()
    expect(existsSync(join(ws.dir, 'junk.txt'))).toBe(false)
    expectNothingLeft(ws)
    await expect(child.commit()).rejects.toMatchObject({ code: 'BranchNotFoundError' })
  })

  it('aborts on dispose unless committed, and withBranch commits or aborts', async () => {
    const ws = await open(std)
    {
      await using b = await ws.branch('scoped')
      await fs.writeFile(join(b.path, 'scoped.txt'), 'x')
    }
    expect(existsSync(join(ws.dir, 'scoped.txt'))).toBe(false)
    expectNothingLeft(ws)
    const value = await ws.withBranch('ok', async (b) => {
      await fs.writeFile(join(b.path, 'ok.txt'), 'ok')
      return 42
    })
    expect(value).toBe(42)
    expect(read(join(ws.dir, 'ok.txt'))).toBe('ok')
    await expect(
      ws.withBranch('bad', async (b) => {
        await fs.writeFile(join(b.path, 'bad.txt'), 'bad')
        throw new Error('strategy failed')
      }),
    ).rejects.toThrow('strategy failed')
    expect(existsSync(join(ws.dir, 'bad.txt'))).toBe(false)
    expectNothingLeft(ws)
  })

  it('merges disjoint siblings', async () => {
    const ws = await open(std)
    const [x, y] = [await ws.branch('x'), await ws.branch('y')]
    await fs.writeFile(join(x.path, 'a.txt'), 'from x')
    await fs.writeFile(join(y.path, 'src/main.ts'), 'from y')
    await x.commit()
    await y.commit()
    expect(read(join(ws.dir, 'a.txt'))).toBe('from x')
    expect(read(join(ws.dir, 'src/main.ts'))).toBe('from y')
    const z = await ws.branch('z') // made after both commits: sees both
    expect(read(join(z.path, 'a.txt'))).toBe('from x')
    await z.abort()
  })

  it('first committer wins under onConflict "fail": the stale sibling is refused and kept', async () => {
    const ws = await open(std)
    const [x, y] = [await ws.branch('x'), await ws.branch('y')]
    await fs.writeFile(join(x.path, 'a.txt'), 'from x')
    await fs.writeFile(join(y.path, 'docs/x.md'), 'from y')
    await x.commit({ onConflict: 'fail' })
    await expect(y.commit({ onConflict: 'fail' })).rejects.toBeInstanceOf(BranchStaleError)
    expect(read(join(ws.dir, 'docs/x.md'))).toBe('x')
    expect(read(join(y.path, 'docs/x.md'))).toBe('from y') // nothing lost: it can still merge
    await y.commit()
    expect(read(join(ws.dir, 'docs/x.md'))).toBe('from y')
  })

  it('refuses a conflicting commit, naming the paths, and loses nothing', async () => {
    const ws = await open(std)
    const [x, y] = [await ws.branch('x'), await ws.branch('y')]
    await fs.writeFile(join(x.path, 'a.txt'), 'from x')
    await fs.writeFile(join(y.path, 'a.txt'), 'from y')
    await fs.writeFile(join(y.path, 'docs/x.md'), 'y docs')
    await fs.rm(join(x.path, 'src/lib'), { recursive: true })
    await fs.writeFile(join(y.path, 'src/lib/util.ts'), 'y util')
    await x.commit()
    const err = await y.commit().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ConflictError)
    expect((err as ConflictError).exitCode).toBe(3)
    expect((err as ConflictError).data['paths']).toEqual(['a.txt', 'src/lib/util.ts'])
    expect(read(join(ws.dir, 'a.txt'))).toBe('from x')
    expect(read(join(ws.dir, 'docs/x.md'))).toBe('x') // all or nothing
    expect(read(join(y.path, 'a.txt'))).toBe('from y')
    await y.abort()
    expectNothingLeft(ws)
  })

  it('merges files both the branch and its parent changed: text line by line, the exec bit like content', async () => {
    const ws = await open({ ...std, 'lines.txt': '1\n2\n3\n4\n5\n', 'run.sh': { content: '#!/bin/sh\necho 1\n', mode: 0o644 } })
    const [x, y] = [await ws.branch('x'), await ws.branch('y')]
    await fs.writeFile(join(x.path, 'lines.txt'), 'one\n2\n3\n4\n5\n')
    await fs.writeFile(join(y.path, 'lines.txt'), '1\n2\n3\n4\nfive\n')
    await fs.writeFile(join(x.path, 'run.sh'), '#!/bin/sh\necho 2\n')
    await fs.chmod(join(y.path, 'run.sh'), 0o755)
    await x.commit()
    const result = await y.commit()
    expect(result.merged).toEqual(['lines.txt', 'run.sh'])
    expect(result.written).toEqual(['lines.txt', 'run.sh'])
    expect(read(join(ws.dir, 'lines.txt'))).toBe('one\n2\n3\n4\nfive\n')
    expect(read(join(ws.dir, 'run.sh'))).toBe('#!/bin/sh\necho 2\n')
    expect(statSync(join(ws.dir, 'run.sh')).mode & 0o777).toBe(0o755)
    expectNothingLeft(ws)
  })

  it('refuses a commit where one of the files both changed does not merge, applying nothing, not even the files that would merge', async () => {
    const ws = await open({ ...std, 'lines.txt': '1\n2\n3\n4\n5\n', 'same.txt': '1\n2\n3\n' })
    const [x, y] = [await ws.branch('x'), await ws.branch('y')]
    await fs.writeFile(join(x.path, 'lines.txt'), 'one\n2\n3\n4\n5\n')
    await fs.writeFile(join(y.path, 'lines.txt'), '1\n2\n3\n4\nfive\n')
    await fs.writeFile(join(x.path, 'same.txt'), '1\nx\n3\n')
    await fs.writeFile(join(y.path, 'same.txt'), '1\ny\n3\n')
    await x.commit()
    const err = await y.commit().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ConflictError)
    expect((err as ConflictError).data['paths']).toEqual(['same.txt'])
    expect(read(join(ws.dir, 'lines.txt'))).toBe('one\n2\n3\n4\n5\n')
    expect(read(join(ws.dir, 'same.txt'))).toBe('1\nx\n3\n')
    expect(read(join(y.path, 'lines.txt'))).toBe('1\n2\n3\n4\nfive\n')
    await y.abort()
    expectNothingLeft(ws)
  })

  it('commits names that are not UTF-8, byte for byte, inside new directories too', async () => {
    const ws = await open(std)
    const bad = Buffer.from('bad\xffname', 'latin1')
    const b = await ws.branch('bytes')
    const inBranch = (...parts: Buffer[]) => Buffer.concat([Buffer.from(`${b.path}/`), ...parts])
    await fs.writeFile(inBranch(bad), 'x')
    await fs.mkdir(inBranch(Buffer.from('dir\xe9', 'latin1')))
    await fs.writeFile(inBranch(Buffer.from('dir\xe9/', 'latin1'), bad), 'inner')
    const result = await b.commit()
    expect(result.written).toHaveLength(2)
    expect(readFileSync(Buffer.concat([Buffer.from(`${ws.dir}/`), bad]), 'utf8')).toBe('x')
    expect(readFileSync(Buffer.concat([Buffer.from(`${ws.dir}/dir\xe9/`, 'latin1'), bad]), 'utf8')).toBe('inner')
    expectNothingLeft(ws)
  })

  it('refuses to commit a FIFO (exit 5, naming it), committing nothing and keeping the branch', async () => {
    const ws = await open(std)
    const b = await ws.branch('fifo')
    await fs.writeFile(join(b.path, 'a.txt'), 'changed')
    execFileSync('mkfifo', [join(b.path, 'pipe')])
    const refused = await b.commit().catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(UnsupportedFileError)
    expect(refused).toMatchObject({ exitCode: 5, data: { path: 'pipe' } })
    expect(read(join(ws.dir, 'a.txt'))).toBe('a')
    expect(existsSync(join(ws.dir, 'pipe'))).toBe(false)
    await fs.rm(join(b.path, 'pipe'))
    await b.commit()
    expect(read(join(ws.dir, 'a.txt'))).toBe('changed')
    expectNothingLeft(ws)
  })

  it('a killed caller leaves nothing the next open does not clean', async () => {
    const ws = await open(std)
    // the module alone, not the whole library: the child's start is most of this test's time
    const script = `
      const { Workspace } = await import(${JSON.stringify(new URL('../../src/branch/Workspace.ts', import.meta.url).pathname)})
      const ws = await Workspace.open({ dir: ${JSON.stringify(ws.dir)}, backend: ${JSON.stringify(backend)} })
      const b = await ws.branch('doomed')
      const c = await b.branch('kid')
      await (await import('node:fs/promises')).writeFile(c.path + '/x', 'x')
      process.stdout.write('ready\\n')
      setInterval(() => {}, 1000)`
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()))
    child.kill('SIGKILL')
    await new Promise((r) => child.once('close', r))
    expect(readdirSync(join(ws.store.root, 'branches', 'live'))).toHaveLength(2)
    const again = await Workspace.open({ dir: ws.dir, backend })
    expectNothingLeft(again)
    expect(existsSync(join(ws.dir, 'x'))).toBe(false)
  })
}
