import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { heldBackWith } from '../../src/world/checkout/heldBackGitPath.js'
import { parseGitConfig } from '../../src/world/workspace/gitConfig.js'
import { readGitRunPaths } from '../../src/world/workspace/gitRunPaths.js'
import { tempDir } from '../helpers/tmp.js'

describe('parseGitConfig', () => {
  it('reads sections, subsections, quotes, escapes, comments and continuations as git does', () => {
    const text = [
      '# a comment',
      '[core]',
      '\thooksPath = .githooks ; trailing comment',
      '\tbare',
      '[Filter "Crypt"]  clean = "./tools/clean.sh" --in # same line as the header',
      '[alias] x = !sh \\',
      '  scripts/x.sh',
      '[branch.Main]',
      '  remote = "a \\"quoted\\" \\\\ value"  ',
      'not a variable line (',
      '[include]',
      '  PATH = ../extra',
    ].join('\n')
    expect(parseGitConfig(text)).toEqual([
      { section: 'core', subsection: null, name: 'hookspath', value: '.githooks' },
      { section: 'core', subsection: null, name: 'bare', value: null },
      { section: 'filter', subsection: 'Crypt', name: 'clean', value: './tools/clean.sh --in' },
      { section: 'alias', subsection: null, name: 'x', value: '!sh   scripts/x.sh' },
      { section: 'branch', subsection: 'main', name: 'remote', value: 'a "quoted" \\ value' },
      { section: 'include', subsection: null, name: 'path', value: '../extra' },
    ])
  })

  it('skips what precedes any section and lines it cannot read', () => {
    expect(parseGitConfig('key = value\n[core\nname = v\n[ok]\n1bad = x\ngood = y')).toEqual([{ section: 'ok', subsection: null, name: 'good', value: 'y' }])
  })
})

describe('readGitRunPaths', () => {
  let home: string
  beforeEach(async () => {
    home = tempDir('git-home')
    vi.stubEnv('GIT_CONFIG_NOSYSTEM', '1')
    vi.stubEnv('GIT_CONFIG_GLOBAL', join(home, 'gitconfig'))
  })
  afterEach(() => vi.unstubAllEnvs())

  const repo = async (config: string, files: Record<string, string> = {}) => {
    const dir = tempDir('git-run-paths')
    await fs.mkdir(join(dir, '.git/hooks'), { recursive: true })
    await fs.writeFile(join(dir, '.git/config'), config)
    for (const [path, text] of Object.entries(files)) {
      await fs.mkdir(join(dir, path, '..'), { recursive: true })
      await fs.writeFile(join(dir, path), text)
    }
    return dir
  }

  it('names the hooks path, included files (relative to the including file) and each word of a command git runs that may name a file', async () => {
    const dir = await repo(
      [
        '[core]\n\thooksPath = .husky/_\n\tfsmonitor = true',
        '[include]\n\tpath = ../team.gitconfig',
        '[includeIf "onbranch:main"]\n\tpath = ../branch.gitconfig',
        '[filter "x"]\n\tclean = ./tools/clean.sh %f\n\tsmudge = git-lfs smudge',
        '[alias]\n\tship = !sh scripts/ship.sh\n\tpy = "!f() { python3 tool.py --in=data/in.txt; }; f"',
        '[remote "origin"]\n\turl = ./not/run',
      ].join('\n'),
      { 'team.gitconfig': '[diff "bin"]\n\ttextconv = tools/textconv\n[include]\n\tpath = nested/more.gitconfig\n', 'nested/more.gitconfig': '[core]\n\teditor = ./ed\n' },
    )
    expect(await readGitRunPaths(dir)).toEqual([
      ...['.husky/_', 'branch.gitconfig', 'data/in.txt', 'ed', 'f', 'git-lfs', 'nested/more.gitconfig', 'python3'],
      ...['scripts/ship.sh', 'sh', 'smudge', 'team.gitconfig', 'tool.py', 'tools/clean.sh', 'tools/textconv'],
    ])
  })

  it('names what a symlinked hook points at, and a path both as configured and through its links', async () => {
    const dir = await repo('[core]\n\thooksPath = hooks-link\n', { 'scripts/pre-commit': '#!/bin/sh\n', 'real-hooks/pre-push': '#!/bin/sh\n' })
    await fs.symlink('real-hooks', join(dir, 'hooks-link'))
    await fs.symlink('../../scripts/pre-commit', join(dir, '.git/hooks/pre-commit'))
    await fs.symlink('/bin/true', join(dir, '.git/hooks/post-commit'))
    expect(await readGitRunPaths(dir)).toEqual(['hooks-link', 'real-hooks', 'scripts/pre-commit'])
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

  it('names paths inside a workspace that is a directory of a larger repository, relative to the workspace', async () => {
    const dir = await repo('[core]\n\thooksPath = project/hooks\n[alias]\n\tx = !other/x.sh\n')
    await fs.mkdir(join(dir, 'project'))
    expect(await readGitRunPaths(join(dir, 'project'))).toEqual(['hooks'])
  })

  it('follows at most ten nested includes, as git does, and a loop ends', async () => {
    const dir = await repo('[include]\n\tpath = ../loop.gitconfig\n', { 'loop.gitconfig': '[include]\n\tpath = loop.gitconfig\n[core]\n\thooksPath = h\n' })
    expect(await readGitRunPaths(dir)).toEqual(['h', 'loop.gitconfig'])
  })

  it('names nothing outside a repository with no configuration', async () => {
    expect(await readGitRunPaths(tempDir('no-repo'))).toEqual([])
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
