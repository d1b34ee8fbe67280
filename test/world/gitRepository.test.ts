import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, runCliInProcess, runProgram } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { type DirState, dirState } from '../helpers/workspace.js'

// A workspace that is a git repository: its .git is content forkpoint snapshots, checks out,
// forks and merges like any other directory (end to end, as a user runs both tools).

const AUTHOR = { GIT_AUTHOR_NAME: 'user', GIT_AUTHOR_EMAIL: 'user@example.com', GIT_COMMITTER_NAME: 'user', GIT_COMMITTER_EMAIL: 'user@example.com' }
/** What an agent runs in a fork: a commit of its own file. */
const agentCommits = (name: string): string => `echo ${name} > ${name}.txt && git add ${name}.txt && git -c user.name=agent -c user.email=agent@example.com commit -q -m ${name}`

async function git(dir: string, ...args: string[]): Promise<string> {
  const r = await runProgram(['git', ...args], { cwd: dir, env: AUTHOR })
  if (r.code !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}

async function fp(dir: string, ...args: string[]): Promise<string> {
  const r = await runCliInProcess(args, { cwd: dir })
  if (r.code !== 0) throw new Error(`forkpoint ${args.join(' ')} (exit ${r.code}): ${r.stderr}`)
  return r.stdout.trim()
}

/** `dirState` of a directory as a tree records it: file modes 0644 or 0755, as git records them (git's read-only objects come back 0644). */
async function recorded(dir: string): Promise<DirState> {
  const state = await dirState(dir)
  for (const entry of Object.values(state)) if (entry.type === 'file') entry.mode = entry.mode & 0o100 ? 0o755 : 0o644
  return state
}

/** A git repository with one commit and a forkpoint store. */
async function gitWorkspace(): Promise<string> {
  const dir = await makeWorkspace({ 'a.txt': '1\n' })
  await git(dir, 'init', '-q', '-b', 'main')
  await git(dir, 'add', 'a.txt')
  await git(dir, 'commit', '-q', '-m', 'one')
  await fp(dir, 'init')
  return dir
}

/** Commit a new content of a.txt. */
async function commitA(dir: string, content: string): Promise<string> {
  await fs.writeFile(join(dir, 'a.txt'), content)
  await git(dir, 'commit', '-q', '-a', '-m', content.trim())
  return git(dir, 'rev-parse', 'HEAD')
}

describe('a git repository as a workspace', () => {
  it('git status between snapshots refreshes .git/index: going back in place still works; a change staged since is still refused', async () => {
    const dir = await gitWorkspace()
    const s1 = await fp(dir, 'snapshot')
    await commitA(dir, '2\n')
    const s2 = await fp(dir, 'snapshot')
    await fp(dir, 'checkout', s1)
    await git(dir, 'status') // after a checkout every inode is new: git refreshes its index's stat data
    expect(await fp(dir, 'status')).toContain('.git/index')
    await fp(dir, 'checkout', s2)
    expect(await git(dir, 'log', '--format=%s')).toBe('2\none')
    await git(dir, 'status')
    await fs.writeFile(join(dir, 'a.txt'), 'staged\n')
    await git(dir, 'add', 'a.txt')
    await fs.writeFile(join(dir, 'a.txt'), '2\n') // the file as the snapshot has it: only the index says what changed
    const refused = await runCliInProcess(['checkout', s1], { cwd: dir })
    expect([refused.code, refused.stderr]).toEqual([3, expect.stringMatching(/uncommitted changes \(\.git\/index, /)])
  })

  it('goes back to an older snapshot in place and --into: .git comes back byte for byte, git sees that history, clean', async () => {
    const dir = await gitWorkspace()
    const first = await git(dir, 'rev-parse', 'HEAD')
    const s1 = await fp(dir, 'snapshot')
    const gitThen = await recorded(join(dir, '.git'))
    const second = await commitA(dir, '2\n')
    const s2 = await fp(dir, 'snapshot')

    const into = join(tempDir('into'), 'old')
    await fp(dir, 'checkout', s1, '--into', into)
    expect(await recorded(join(into, '.git'))).toEqual(gitThen)
    expect([await git(into, 'rev-parse', 'HEAD'), await git(into, 'status', '--porcelain')]).toEqual([first, ''])

    await fp(dir, 'checkout', s1)
    expect(await recorded(join(dir, '.git'))).toEqual(gitThen)
    expect([await git(dir, 'rev-parse', 'HEAD'), await fs.readFile(join(dir, 'a.txt'), 'utf8')]).toEqual([first, '1\n'])
    expect(await git(dir, 'status', '--porcelain')).toBe('')
    // git status refreshed the stat data in .git/index: forkpoint sees that file changed, and only it
    const status = await runCliInProcess(['status'], { cwd: dir })
    expect(status.stdout.split('\n').filter((l) => /^[MAD] /.test(l))).toEqual([expect.stringMatching(/^M \.git\/index /)])

    await fp(dir, 'checkout', s2, '--force')
    expect([await git(dir, 'rev-parse', 'HEAD'), await git(dir, 'status', '--porcelain')]).toEqual([second, ''])
  })

  it('merges back a fork whose agent ran git commit; a second fork that also committed conflicts on .git and --abort restores it', async () => {
    const dir = await gitWorkspace()
    const base = await fp(dir, 'snapshot')
    await fp(dir, 'fork', base, '-n', '2', '--materialize')
    const branches = (await fp(dir, 'branch', '--list')).split('\n').map((line) => line.split('\t')[0]!)
    const children: string[] = []
    for (const [i, branch] of branches.entries()) {
      await fp(dir, 'run', '--branch', branch, '--', 'sh', '-c', agentCommits(`agent${i}`))
      children.push(await fp(dir, 'snapshot', '--branch', branch))
    }

    await fp(dir, 'merge', children[0]!)
    expect(await git(dir, 'log', '--format=%s')).toBe('agent0\none')
    expect([await fs.readFile(join(dir, 'agent0.txt'), 'utf8'), await git(dir, 'status', '--porcelain')]).toEqual(['agent0\n', ''])
    await fp(dir, 'snapshot')

    const before = await dirState(dir)
    const conflict = await runCliInProcess(['merge', children[1]!], { cwd: dir })
    expect(conflict.code, conflict.stderr).toBe(3)
    expect(conflict.stdout).toMatch(/conflict.*\.git\/index.*\.git\/refs\/heads\/main/)
    expect(await fs.readFile(join(dir, 'agent1.txt'), 'utf8')).toBe('agent1\n') // what merged cleanly is there
    await fp(dir, 'merge', '--abort')
    expect(await dirState(dir)).toEqual(before)
    expect(await git(dir, 'log', '--format=%s')).toBe('agent0\none')
  })
})

describe('examples/gitRepository.sh', () => {
  it('runs to the end: one fork merged back with its commit, then two snapshots back, git clean', async () => {
    const r = await runProgram(['bash', join(ROOT, 'examples', 'gitRepository.sh')], { cwd: tempDir('example') })
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toMatch(/^after the merge: agent 1 second first \(idea1\.txt\)$/m)
    expect(r.stdout).toMatch(/^two snapshots back: first, README\.md: hello\ngit status: 0 changes$/m)
  })
})

describe('init in a git repository', () => {
  it('adds the store to .git/info/exclude when there is no .gitignore, once: git status shows nothing', async () => {
    const dir = await makeWorkspace({ 'a.txt': '1\n' })
    await git(dir, 'init', '-q', '-b', 'main')
    const exclude = join(dir, '.git', 'info', 'exclude')
    const gitsOwn = await fs.readFile(exclude, 'utf8')
    expect(await fp(dir, 'init')).toMatch(/added to \.git\/info\/exclude/)
    expect(await fs.readFile(exclude, 'utf8')).toBe(`${gitsOwn}/.forkpoint/\n`)
    expect(await git(dir, 'status', '--porcelain')).toBe('?? a.txt')
    expect(await fp(dir, 'init')).not.toMatch(/exclude/)
    expect(await fs.readFile(exclude, 'utf8')).toBe(`${gitsOwn}/.forkpoint/\n`)
  })

  it('a workspace in a subdirectory, or in a git worktree, is excluded where git reads it; a .gitignore is used instead when there is one', async () => {
    const repo = await makeWorkspace({ 'pkg/a.txt': '1\n', 'b.txt': 'b\n' })
    await git(repo, 'init', '-q', '-b', 'main')
    await git(repo, 'add', '.')
    await git(repo, 'commit', '-q', '-m', 'one')
    await fp(join(repo, 'pkg'), 'init')
    expect(await fs.readFile(join(repo, '.git', 'info', 'exclude'), 'utf8')).toMatch(/\n\/pkg\/\.forkpoint\/\n$/)
    expect(await git(repo, 'status', '--porcelain')).toBe('')

    const worktree = join(tempDir('worktree'), 'wt')
    await git(repo, 'worktree', 'add', '-q', worktree)
    await fp(worktree, 'init')
    expect(await git(worktree, 'status', '--porcelain')).toBe('')

    const ignored = await makeWorkspace({ '.gitignore': 'node_modules\n' })
    await git(ignored, 'init', '-q')
    const gitsOwn = await fs.readFile(join(ignored, '.git', 'info', 'exclude'), 'utf8')
    await fp(ignored, 'init')
    expect(await fs.readFile(join(ignored, '.git', 'info', 'exclude'), 'utf8')).toBe(gitsOwn)
    expect(await git(ignored, 'status', '--porcelain')).toBe('?? .gitignore')
  })
})
