import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { heldBackWith } from '../../src/world/checkout/heldBackGitPath.js'
import { readGitRunPaths, repositoriesAbove } from '../../src/world/workspace/gitRunPaths.js'
import { fsPath, nameFromBytes } from '../../src/util/fsName.js'
import { tempDir } from '../helpers/tmp.js'

describe('readGitRunPaths', () => {
  let home: string
  beforeEach(async () => {
    home = tempDir('git-home')
    vi.stubEnv('GIT_CONFIG_NOSYSTEM', '1')
    vi.stubEnv('GIT_CONFIG_GLOBAL', join(home, 'gitconfig'))
  })
  afterEach(() => vi.unstubAllEnvs())

  /** A repository with `config` and the files given (their names are paths of the work tree). */
  const repo = async (config: string | Buffer, files: Record<string, string> = {}, at = tempDir('git-run-paths')) => {
    await fs.mkdir(join(at, '.git/hooks'), { recursive: true })
    await fs.writeFile(join(at, '.git/config'), config)
    for (const [path, text] of Object.entries(files)) {
      await fs.mkdir(join(at, path, '..'), { recursive: true })
      await fs.writeFile(join(at, path), text)
    }
    return at
  }

  it('names the hooks path, included files (relative to the including file) and the scripts commands git runs name, not words of aliases or programs on PATH', async () => {
    const dir = await repo(
      [
        '[core]\n\thooksPath = .githooks\n\tfsmonitor = true',
        '[include]\n\tpath = ../team.gitconfig',
        '[includeIf "onbranch:main"]\n\tpath = ../branch.gitconfig',
        '[filter "x"]\n\tclean = ./tools/clean.sh %f\n\tsmudge = git-lfs smudge',
        '[alias]\n\tship = !sh scripts/ship.sh\n\tpy = "!f() { python3 tool.py --in=data/in.txt; }; f"\n\tlg = log --oneline web/',
        '[pager]\n\tlog = "sh $PWD/pg/pager.sh"',
        '[credential]\n\thelper = cache --timeout=3600',
        '[remote "origin"]\n\turl = ./not/run\n\tuploadpack = ./tools/upload-pack.sh',
      ].join('\n'),
      {
        'team.gitconfig': '[diff "bin"]\n\ttextconv = tools/textconv\n[include]\n\tpath = nested/more.gitconfig\n',
        'nested/more.gitconfig': '[core]\n\teditor = ./ed\n',
        'tool.py': '',
        'web/index.html': '',
        log: '',
        cache: '',
      },
    )
    expect(await readGitRunPaths(dir)).toEqual([
      ...['.githooks', 'branch.gitconfig', 'ed', 'nested/more.gitconfig', 'pg/pager.sh', 'team.gitconfig', 'tools/clean.sh'],
      ...['tools/textconv', 'tools/upload-pack.sh'],
    ])
  })

  it('reads each variable as git does: a comment ending in a backslash, a value ending in an escaped one, a name that is not UTF-8', async () => {
    const tricky = Buffer.concat([
      Buffer.from('[core]\n\teditor = vi # a comment \\\n\thooksPath = .githooks\n[alias]\n\tx = "!echo C:\\\\"\n[core]\n\tsshCommand = '),
      Buffer.from([0x2e, 0x2f, 0x73, 0x73, 0x68, 0xe9]), // ./ssh\xe9
      Buffer.from('\n'),
    ])
    const dir = await repo(tricky)
    expect(await readGitRunPaths(dir)).toEqual(['.githooks', nameFromBytes(Buffer.from([0x73, 0x73, 0x68, 0xe9]))])
  })

  it('names the husky directory above its `_`, and what a linked hook points at, in .git/hooks and in the hooks path', async () => {
    const dir = await repo('[core]\n\thooksPath = .husky/_\n', { '.husky/_/h': '', 'scripts/pre-commit': '', 'tools/pc.sh': '' })
    await fs.symlink('../../scripts/pre-commit', join(dir, '.git/hooks/pre-commit'))
    await fs.symlink('/bin/true', join(dir, '.git/hooks/post-commit'))
    await fs.symlink('../../tools/pc.sh', join(dir, '.husky/_/pre-push'))
    expect(await readGitRunPaths(dir)).toEqual(['.husky', '.husky/_', 'scripts/pre-commit', 'tools/pc.sh'])
  })

  it('names a path through its links: a linked hooks path, .git/hooks linked into the work tree, a link to a directory not made yet', async () => {
    const dir = await repo('[core]\n\thooksPath = link/hooks\n[include]\n\tpath = ../..inc\n', { 'real/keep': '' })
    await fs.symlink('real', join(dir, 'link'))
    await fs.rm(join(dir, '.git/hooks'), { recursive: true })
    await fs.mkdir(join(dir, 'githooks'))
    await fs.symlink('../githooks', join(dir, '.git/hooks'))
    expect(await readGitRunPaths(dir)).toEqual(['..inc', 'githooks', 'link/hooks', 'real/hooks'])
  })

  it('reads the global configuration, and a worktree through its .git file and the main repository’s commondir', async () => {
    const main = await repo('[core]\n\thooksPath = .githooks\n')
    await fs.mkdir(join(main, '.git/worktrees/wt'), { recursive: true })
    await fs.writeFile(join(main, '.git/worktrees/wt/commondir'), '../..\n')
    const worktree = tempDir('git-worktree')
    await fs.writeFile(join(worktree, '.git'), `gitdir: ${join(main, '.git/worktrees/wt')}\n`)
    await fs.writeFile(join(home, 'gitconfig'), '[core]\n\tpager = ./page.sh\n')
    expect(await readGitRunPaths(worktree)).toEqual(['.githooks', 'page.sh'])
  })

  it('names paths inside a workspace that is a directory of a larger repository, and in nested repositories it is given', async () => {
    const dir = await repo('[core]\n\thooksPath = project/hooks\n[alias]\n\tx = !other/x.sh\n')
    await repo('[core]\n\thooksPath = .githooks\n', {}, join(dir, 'project/sub'))
    expect(await readGitRunPaths(join(dir, 'project'))).toEqual(['hooks'])
    expect(await repositoriesAbove(join(dir, 'project'), ['sub/a/b.txt', 'c.txt'])).toEqual(['sub'])
    expect(await readGitRunPaths(join(dir, 'project'), { nested: ['sub'] })).toEqual(['hooks', 'sub/.githooks'])
  })

  it("names the repository's own config and hooks where a .git link or gitdir: file leads elsewhere in the work tree", async () => {
    const dir = tempDir('git-linked')
    await fs.mkdir(join(dir, '.repo/gitdir/hooks'), { recursive: true })
    await fs.writeFile(join(dir, '.repo/gitdir/config'), '[core]\n')
    await fs.symlink('.repo/gitdir', join(dir, '.git'))
    expect(await readGitRunPaths(dir)).toEqual(['.repo/gitdir/commondir', '.repo/gitdir/config', '.repo/gitdir/config.worktree', '.repo/gitdir/hooks'])
    await fs.rm(join(dir, '.git'))
    await fs.writeFile(join(dir, '.git'), `gitdir: .repo/gitdir\n${'\n'.repeat(5000)}`)
    expect(await readGitRunPaths(dir)).toEqual(['.repo/gitdir/commondir', '.repo/gitdir/config', '.repo/gitdir/config.worktree', '.repo/gitdir/hooks'])
  })

  it('follows at most ten nested includes, as git does; a loop ends, and a FIFO in place of a config is skipped', async () => {
    const dir = await repo('[include]\n\tpath = ../loop.gitconfig\n\tpath = ../fifo\n', { 'loop.gitconfig': '[include]\n\tpath = loop.gitconfig\n[core]\n\thooksPath = h\n' })
    await import('node:child_process').then(({ execFileSync }) => execFileSync('mkfifo', [join(dir, 'fifo')]))
    expect(await readGitRunPaths(dir)).toEqual(['fifo', 'h', 'loop.gitconfig'])
  })

  it('names a dangling link’s target, a global config file kept in the workspace, and every hook name where the hooks path is the top', async () => {
    const dir = await repo('[core]\n\thooksPath = .githooks\n')
    await fs.symlink('gen/hooks', join(dir, '.githooks'))
    vi.stubEnv('GIT_CONFIG_GLOBAL', join(dir, 'dotfiles/gitconfig'))
    expect(await readGitRunPaths(dir)).toEqual(['.githooks', 'dotfiles/gitconfig', 'gen/hooks'])
    await fs.writeFile(join(dir, '.git/config'), `[core]\n\thooksPath = ${dir}\n`)
    expect(await readGitRunPaths(dir)).toEqual(expect.arrayContaining(['pre-commit', 'post-checkout', 'commit-msg', 'pre-push']))
  })

  it('names what the caller’s configuration runs in a repository sandboxed work made, without reading that one’s own config', async () => {
    const dir = await repo('[core]\n')
    await fs.writeFile(join(home, 'gitconfig'), '[core]\n\thooksPath = .githooks\n')
    await fs.mkdir(join(dir, 'src/.git'), { recursive: true })
    await fs.writeFile(join(dir, 'src/.git/config'), '[core]\n\thooksPath = /elsewhere\n[include]\n\tpath = ../../x.cfg\n')
    expect(await readGitRunPaths(dir, { made: ['src'] })).toEqual(['.githooks', 'src/.githooks'])
  })

  it('refuses when git cannot be run (exit 2) and a config file over 16 MiB (exit 5): git would read what forkpoint did not', async () => {
    const dir = await repo('[core]\n')
    vi.stubEnv('PATH', '/nonexistent')
    await expect(readGitRunPaths(dir)).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/git is not on PATH/) })
    vi.unstubAllEnvs()
    vi.stubEnv('GIT_CONFIG_NOSYSTEM', '1')
    vi.stubEnv('GIT_CONFIG_GLOBAL', join(home, 'gitconfig'))
    await fs.truncate(join(dir, '.git/config'), 17 * 1024 * 1024)
    await expect(readGitRunPaths(dir)).rejects.toMatchObject({ exitCode: 5, message: expect.stringMatching(/is over 16777216 bytes/) })
  })

  it('names nothing outside a repository', async () => {
    expect(await readGitRunPaths(tempDir('no-repo'))).toEqual([])
  })

  it('reads names that are not UTF-8 in a hooks path as the fingerprint writes them', async () => {
    const hooks = Buffer.from([0x68, 0x6f, 0x6f, 0x6b, 0x73, 0xe9]) // hooks\xe9
    const dir = await repo(Buffer.concat([Buffer.from('[core]\n\thooksPath = '), hooks, Buffer.from('\n')]))
    await fs.mkdir(fsPath(join(dir, nameFromBytes(hooks))))
    expect(await readGitRunPaths(dir)).toEqual([nameFromBytes(hooks)])
  })
})

describe('heldBackWith', () => {
  const held = heldBackWith(['.husky/_', 'tools/hooks'])
  it('holds back git files, each run path and what is under it, and a non-directory in place of a directory above one', () => {
    expect(held('.git/config', false)).toBe(true)
    expect([held('.husky/_', true), held('.husky/_/h', false), held('tools/hooks/pre-commit', false)]).toEqual([true, true, true])
    expect([held('tools', false), held('.husky', false), held('tools', true), held('.husky', true)]).toEqual([true, true, false, false])
    expect([held('.husky/pre-commit', false), held('tools/hooks-old', false), held('src/a.ts', false)]).toEqual([false, false, false])
  })
})
