import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Workspace, snapshotWorkspace } from '../../src/index.js'
import { runCli } from '../helpers/cli.js'
import { fpAsNobody, giveToNobody } from '../helpers/privilegedModes.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'
import { writeMarkedState } from '../../src/store/writtenHere.js'

/**
 * A store's state files (refs, the workspace index, work in progress) are data from elsewhere too: a cloned
 * repository holding a `.forkpoint/` carries symlinks and any JSON. A state file that is a symlink or a FIFO is
 * refused as a damaged store (exit 5) instead of read until memory ends or waited on. A checkout, commit or merge in
 * progress, or a branch's commit journal, is acted on only when it is the very file written here: a well-formed one
 * a clone carries could place a `.git/` of its own in the workspace. One that names a path outside the workspace or
 * gives a file more than permission bits is refused before anything is written, removed or read there, even when
 * marked as written here (`asWrittenHere`: the schema is what refuses those).
 */
const users = process.getuid?.() === 0 ? (['root', 'nobody'] as const) : (['root'] as const)

const toDevZero = (file: string) => symlinkSync('/dev/zero', file)
const toFifo = (file: string) => execFileSync('mkfifo', [file])

/** A workspace with one snapshot, `a.txt` and `b.txt`, its store at `.forkpoint`. */
async function snapshotted(): Promise<{ dir: string; state: (name: string) => string }> {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'hello\n', 'b.txt': 'world\n' })
  await snapshotWorkspace({ dir })
  return { dir, state: (name) => store.path(name) }
}

/** Work in progress as forkpoint writes it here (`writtenHere.ts`), so what is refused is its content. */
const asWrittenHere = (file: string, value: object) => writeMarkedState(file, value)

/** `file` replaced by what `replace` makes. */
function replaced(file: string, replace: (file: string) => void): void {
  rmSync(file)
  replace(file)
}

describe.each(users)('a store whose state files are not what forkpoint wrote (as %s)', (user) => {
  // a separate process for root too: an open of a FIFO would block the process it runs in
  const fp = (dir: string, ...args: string[]) => {
    if (user === 'root') return runCli(args, { cwd: dir })
    giveToNobody(dir)
    return fpAsNobody(dir, ...args)
  }
  const refused = async (dir: string, message: RegExp, ...args: string[]) => {
    const run = await fp(dir, ...args)
    expect(run.code, run.stderr).toBe(5)
    expect(run.stderr).toMatch(message)
  }

  it('refuses a head ref that is a symlink to /dev/zero (exit 5) instead of reading it until memory ends', async () => {
    const { dir, state } = await snapshotted()
    replaced(state('refs/heads/main'), toDevZero)
    await refused(dir, /refs\/heads\/main is not a regular file/, 'log')
  })

  it('refuses a head ref that is a FIFO (exit 5) instead of waiting for a writer', async () => {
    const { dir, state } = await snapshotted()
    replaced(state('refs/heads/main'), toFifo)
    await refused(dir, /refs\/heads\/main is not a regular file/, 'status')
  })

  it('scans afresh past a workspace index that is a symlink to /dev/zero: the next snapshot is whole', async () => {
    const { dir, state } = await snapshotted()
    replaced(state('index'), toDevZero)
    writeFileSync(join(dir, 'c.txt'), 'new\n')
    const run = await fp(dir, 'snapshot', '-m', 'after')
    expect(run.code, run.stderr).toBe(0)
    const shown = await fp(dir, 'show', 'HEAD:c.txt')
    expect(shown.stdout).toBe('new\n')
  })

  it('refuses a store directory that is a symlink (exit 5): no ref is read from, nor reflog written to, where it leads', async () => {
    const { dir, state } = await snapshotted()
    rmSync(state('refs/heads'), { recursive: true })
    symlinkSync('/etc', state('refs/heads'))
    writeFileSync(state('HEAD'), 'ref: refs/heads/passwd\n')
    const run = await fp(dir, 'status')
    expect([run.code, run.stderr]).toEqual([5, expect.stringMatching(/refs\/heads is not a directory \(a symlink\?\): refusing the store/)])
    expect(run.stderr + run.stdout).not.toMatch(/root:/)
    const outside = tempDir('logs')
    const other = await snapshotted()
    rmSync(other.state('logs'), { recursive: true })
    symlinkSync(outside, other.state('logs'))
    writeFileSync(join(other.dir, 'c.txt'), 'c\n')
    expect((await fp(other.dir, 'snapshot', '-m', 'x')).code).toBe(5)
    expect(readdirSync(outside)).toEqual([])
  })

  it("refuses a reflog that is a symlink: the snapshot's line is appended nowhere (exit 5)", async () => {
    const { dir, state } = await snapshotted()
    const victim = join(tempDir('victim'), 'victim.txt')
    writeFileSync(victim, 'keep me\n')
    if (user === 'nobody') giveToNobody(dirname(victim))
    replaced(state('logs/HEAD'), (file) => symlinkSync(victim, file))
    writeFileSync(join(dir, 'c.txt'), 'c\n')
    await refused(dir, /logs\/HEAD is not a regular file/, 'snapshot', '-m', 'x')
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n')
  })

  it('refuses a run index that is a symlink: SQLite writes no table where it leads (exit 5)', async () => {
    const { dir, state } = await snapshotted()
    const elsewhere = join(tempDir('db'), 'other.db')
    writeFileSync(elsewhere, '')
    if (user === 'nobody') giveToNobody(dirname(elsewhere))
    rmSync(state('runs.db'), { force: true })
    symlinkSync(elsewhere, state('runs.db'))
    await refused(dir, /the run index .*runs\.db is not a regular file/, 'runs')
    expect(readFileSync(elsewhere).length).toBe(0)
  })

  it('refuses an HTTP policy that is a FIFO (exit 5) instead of waiting for a writer', async () => {
    const { dir, state } = await snapshotted()
    toFifo(state('effects.json'))
    await refused(dir, /effects\.json is not a regular file/, 'run', '--net', 'host', '--', 'true')
  })

  it('refuses a lock that is a directory (exit 5), not an internal error', async () => {
    const { dir, state } = await snapshotted()
    mkdirSync(state('locks/gc'))
    await refused(dir, /locks\/gc is a directory where a lock file belongs/, 'gc')
  })

  it('refuses a workspace index that is a directory (exit 5, left as it is), not an internal error', async () => {
    const { dir, state } = await snapshotted()
    rmSync(state('index'))
    mkdirSync(state('index'))
    await refused(dir, /index is a directory where forkpoint keeps a file/, 'snapshot')
    expect(statSync(state('index')).isDirectory()).toBe(true)
  })

  it('init leaves a .gitignore that is a symlink to /dev/zero alone instead of reading it until memory ends', async () => {
    const dir = tempDir('ws')
    symlinkSync('/dev/zero', join(dir, '.gitignore'))
    const run = await fp(dir, 'init')
    expect(run.code, run.stderr).toBe(0)
  })

  /** A commit of branch `x` in progress, as a cloned store can claim one: the files `saved` lists, COMMIT_SAVED/0 made by `copy`. */
  async function commitInProgress(saved: (dir: string) => unknown[], copy?: (file: string) => void): Promise<string> {
    const { dir, state } = await snapshotted()
    await asWrittenHere(state('COMMIT_STATE.json'), { kind: 'commit-state', schemaVersion: 1, branch: 'x', conflicts: [], saved: saved(dir) })
    mkdirSync(state('COMMIT_SAVED'))
    copy?.(join(state('COMMIT_SAVED'), '0'))
    return dir
  }
  const damagedCommit = /the commit state \(COMMIT_STATE\.json in the store\) is damaged/

  it('refuses a commit in progress that would remove a file outside the workspace on --abort (exit 5)', async () => {
    const outside = tempDir('outside')
    if (user === 'nobody') giveToNobody(outside)
    const victim = join(outside, 'victim.txt')
    writeFileSync(victim, 'keep me\n')
    const dir = await commitInProgress((at) => [{ path: relative(at, victim), copy: null, mode: 0o644 }])
    await refused(dir, damagedCommit, 'commit', 'x', '--abort')
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n')
  })

  it('refuses a commit in progress that would give a restored file setuid on --abort (exit 5)', async () => {
    const dir = await commitInProgress(
      () => [{ path: 'a.txt', copy: '0', mode: 0o4755 }],
      (file) => writeFileSync(file, 'planted\n'),
    )
    await refused(dir, damagedCommit, 'commit', 'x', '--abort')
    expect(statSync(join(dir, 'a.txt')).mode & 0o7000).toBe(0)
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('hello\n')
  })

  it("refuses a commit's saved copy that is a symlink to a file outside the store: --abort copies nothing in (exit 5)", async () => {
    const dir = await commitInProgress(
      () => [{ path: 'a.txt', copy: '0', mode: 0o644 }],
      (file) => symlinkSync('/etc/passwd', file),
    )
    await refused(dir, /COMMIT_SAVED\/0 is not a regular file/, 'commit', 'x', '--abort')
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('hello\n')
  })

  it("refuses a branch's commit journal naming a path outside the workspace: recovery removes nothing there (exit 5)", async () => {
    const outside = tempDir('outside')
    const victim = join(outside, 'victim.txt')
    writeFileSync(victim, 'keep me\n')
    if (user === 'nobody') giveToNobody(outside)
    const { dir, state } = await snapshotted()
    const branch = await (await Workspace.open({ dir })).branch('x', { persistent: true })
    const journal = { kind: 'commit-journal', schemaVersion: 1, phase: 'applying', branch: branch.id, parent: null, committer: { pid: 2 ** 22 + 1, start: '0' } }
    const ops = [{ type: 'delete', path: relative(dir, outside) }]
    await asWrittenHere(state(`branches/live/${branch.id}/commit.json`), { ...journal, generation: 1, ops })
    await refused(dir, /its commit journal is not one forkpoint writes: ops\.0\.path: not a path inside the workspace/, 'branch')
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n')
  })

  it("refuses a branch's commit journal reaching outside through a symlink inside the workspace: nothing removed there", async () => {
    const outside = tempDir('outside')
    const victim = join(outside, 'victim.txt')
    writeFileSync(victim, 'keep me\n')
    if (user === 'nobody') giveToNobody(outside)
    const { dir, state } = await snapshotted()
    symlinkSync(outside, join(dir, 'link'))
    const branch = await (await Workspace.open({ dir })).branch('x', { persistent: true })
    const journal = { kind: 'commit-journal', schemaVersion: 1, phase: 'applying', branch: branch.id, parent: null, committer: { pid: 2 ** 22 + 1, start: '0' } }
    await asWrittenHere(state(`branches/live/${branch.id}/commit.json`), { ...journal, generation: 1, ops: [{ type: 'delete', path: 'link/victim.txt' }] })
    const run = await fp(dir, 'branch')
    expect([run.code, run.stderr]).toEqual([5, expect.stringMatching(/refusing to write link\/victim\.txt: .*link is not a real directory/)])
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n')
  })

  it('a note of a running command that is not one forkpoint writes neither crashes nor blocks a commit', async () => {
    const { dir, state } = await snapshotted()
    expect((await fp(dir, 'branch', 'x')).code).toBe(0)
    mkdirSync(state('sandboxes'), { recursive: true })
    writeFileSync(state('sandboxes/0123456789ab.json'), '{}')
    writeFileSync(state('sandboxes/0123456789ac.json'), 'not json')
    const run = await fp(dir, 'commit', 'x')
    expect(run.code, run.stderr).toBe(0)
  })

  it('refuses an interrupted checkout whose journal names paths outside the workspace: nothing of it runs (exit 5)', async () => {
    const outside = tempDir('outside')
    const victim = join(outside, 'victim.txt')
    writeFileSync(victim, 'keep me\n')
    if (user === 'nobody') giveToNobody(outside)
    const { dir, state } = await snapshotted()
    const steps = [{ op: 'remove', path: relative(dir, victim) }]
    await asWrittenHere(state('checkout-journal.json'), { kind: 'checkout-journal', schemaVersion: 1, workspace: dir, staging: outside, steps, head: 'ref: refs/heads/main\n' })
    await refused(dir, /refusing an interrupted checkout: the journal is not one forkpoint writes: staging: .*steps\.0\.path: not a path inside the workspace/, 'status')
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n')
    const again = await fp(dir, 'status')
    expect(again.code, again.stderr).toBe(0)
  })

  it('refuses a merge in progress whose conflicts name paths outside the workspace (exit 5)', async () => {
    const { dir, state } = await snapshotted()
    const head = readFileSync(state('refs/heads/main'), 'utf8').trim()
    const conflict = { path: '../../etc/passwd', kind: 'content', kept: { ours: '../../etc/passwd', theirs: '../../etc/passwd' } }
    const merge = { kind: 'merge-state', schemaVersion: 1, ours: head, theirs: head, bases: [], draft: head, conflicts: [conflict], layerConflicts: [], layers: [], message: 'm' }
    await asWrittenHere(state('MERGE_STATE.json'), merge)
    await refused(dir, /the merge state \(MERGE_STATE\.json in the store\) is damaged/, 'merge', '--continue')
    expect(existsSync(state('MERGE_STATE.json'))).toBe(true)
  })

  /** A hook a clone would have git run: it writes `ran` beside the hooks when run. */
  const HOOK = '#!/bin/sh\necho pwned > "$(dirname "$0")/ran"\n'
  const gitHook = (dir: string) => join(dir, '.git/hooks/post-checkout')

  it("refuses a well-formed commit journal a clone carries: no `.git` of the clone's placed in the workspace (exit 5)", async () => {
    const { dir, state } = await snapshotted()
    mkdirSync(join(dir, '.git/hooks'), { recursive: true })
    const branch = await (await Workspace.open({ dir })).branch('x', { persistent: true })
    // what the clone carries beside the journal: the "staged" directory the journal puts in place of .git
    mkdirSync(join(dir, `..git.fp-new-${branch.id}/hooks`), { recursive: true })
    writeFileSync(join(dir, `..git.fp-new-${branch.id}/hooks/post-checkout`), HOOK, { mode: 0o755 })
    const journal = { kind: 'commit-journal', schemaVersion: 1, phase: 'applying', branch: branch.id, parent: null, committer: { pid: 2 ** 22 + 1, start: '0' } }
    writeFileSync(state(`branches/live/${branch.id}/commit.json`), JSON.stringify({ ...journal, generation: 1, ops: [{ type: 'put', path: '.git' }] }))
    await refused(dir, /its commit journal is not one forkpoint wrote: it was not written here/, 'branch')
    expect(existsSync(gitHook(dir))).toBe(false)
  })

  it('refuses a well-formed checkout journal a clone carries: no git hook placed in the workspace (exit 5)', async () => {
    const { dir, state } = await snapshotted()
    mkdirSync(join(dir, '.git/hooks'), { recursive: true })
    const staging = '.checkout.tmp-planted'
    mkdirSync(state(`tmp/${staging}`), { recursive: true })
    writeFileSync(state(`tmp/${staging}/0`), HOOK, { mode: 0o755 })
    const steps = [{ op: 'place', path: '.git/hooks/post-checkout' }]
    writeFileSync(state('checkout-journal.json'), JSON.stringify({ kind: 'checkout-journal', schemaVersion: 1, workspace: dir, staging, steps, head: 'ref: refs/heads/main\n' }))
    await refused(dir, /refusing an interrupted checkout: the journal is not one forkpoint wrote: it was not written here/, 'status')
    expect(existsSync(gitHook(dir))).toBe(false)
  })

  it('refuses a well-formed commit in progress a clone carries: --abort restores no git config from it (exit 5)', async () => {
    const { dir, state } = await snapshotted()
    mkdirSync(join(dir, '.git'))
    writeFileSync(join(dir, '.git/config'), '[core]\n')
    writeFileSync(
      state('COMMIT_STATE.json'),
      JSON.stringify({ kind: 'commit-state', schemaVersion: 1, branch: 'x', conflicts: [], saved: [{ path: '.git/config', copy: '0', mode: 0o644 }] }),
    )
    mkdirSync(state('COMMIT_SAVED'))
    writeFileSync(state('COMMIT_SAVED/0'), '[core]\n\tfsmonitor = "echo pwned >&2"\n')
    await refused(dir, /the commit state \(COMMIT_STATE\.json in the store\) is damaged \(it was not written here/, 'commit', 'x', '--abort')
    expect(readFileSync(join(dir, '.git/config'), 'utf8')).toBe('[core]\n')
  })

  /**
   * A git clone of a repository that tracks an author's `.forkpoint/`: its main image holds a `.git/config` with an
   * fsmonitor and a hook; `prepare` edits the author's store before it is committed.
   */
  async function clonedStore(prepare?: (author: string) => Promise<void> | void): Promise<string> {
    const { dir: author } = await storeWorkspace({ 'a.txt': 'a\n', '.git/config': '[core]\n\tfsmonitor = "echo pwned"\n', '.git/hooks/post-checkout': HOOK })
    await snapshotWorkspace({ dir: author })
    await prepare?.(author)
    const repo = tempDir('repo')
    execFileSync('cp', ['-a', join(author, '.forkpoint'), repo])
    writeFileSync(join(repo, 'README'), 'hello\n')
    for (const argv of [
      ['init', '-q'],
      ['add', '-f', '.'],
      ['-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qm', 'store'],
    ])
      execFileSync('git', argv, { cwd: repo })
    const clone = join(tempDir('clone'), 'c')
    execFileSync('git', ['clone', '-q', repo, clone])
    if (user === 'nobody') giveToNobody(dirname(clone))
    return clone
  }
  const heldGitFiles = /held back[^\n]*\n {2}\.git\/config\n {2}\.git\/hooks\/post-checkout\n/
  const ownConfig = (clone: string) => readFileSync(join(clone, '.git/config'), 'utf8')

  it("a cloned repository's whole store is from elsewhere: checking out its images holds back their git config and hooks", async () => {
    const clone = await clonedStore()
    const out = join(tempDir('out'), 'o')
    if (user === 'nobody') giveToNobody(dirname(out))
    const run = await fp(clone, 'checkout', 'main', '--into', out)
    expect([run.code, run.stdout], run.stderr).toEqual([0, expect.stringMatching(heldGitFiles)])
    expect(readFileSync(join(out, 'a.txt'), 'utf8')).toBe('a\n')
    expect(['.git/config', '.git/hooks/post-checkout'].map((p) => existsSync(join(out, p)))).toEqual([false, false])
  })

  it("init does not make a cloned store without HEAD its own: a checkout still holds back its images' git files", async () => {
    const clone = await clonedStore((author) => rmSync(join(author, '.forkpoint/HEAD')))
    expect((await fp(clone, 'init')).code).toBe(0)
    const config = ownConfig(clone)
    const run = await fp(clone, 'checkout', 'main', '--force')
    expect([run.code, run.stdout], run.stderr).toEqual([0, expect.stringMatching(heldGitFiles)])
    expect(ownConfig(clone)).toBe(config)
    expect(existsSync(join(clone, '.git/hooks/post-checkout'))).toBe(false)
  })

  it("merge --abort in a cloned store, whatever merge state it carries, holds back HEAD's git files", async () => {
    const clone = await clonedStore((author) => writeFileSync(join(author, '.forkpoint/MERGE_STATE.json'), '{}'))
    const config = ownConfig(clone)
    const run = await fp(clone, 'merge', '--abort')
    expect([run.code, run.stdout], run.stderr).toEqual([0, expect.stringMatching(heldGitFiles)])
    expect(ownConfig(clone)).toBe(config)
    expect(existsSync(join(clone, '.git/hooks/post-checkout'))).toBe(false)
  })

  it("a merge of a cloned store's image holds back the hook it adds, in the workspace and in the merge snapshot", async () => {
    const clone = await clonedStore(async (author) => {
      writeFileSync(join(author, 'b.txt'), 'b\n')
      writeFileSync(join(author, '.git/hooks/post-merge'), HOOK, { mode: 0o755 })
      const feature = await snapshotWorkspace({ dir: author })
      writeFileSync(join(author, '.forkpoint/refs/heads/feature'), `${feature.id}\n`)
      writeFileSync(join(author, '.forkpoint/refs/heads/main'), `${feature.parents[0]}\n`)
    })
    expect((await fp(clone, 'snapshot', '-m', 'mine')).code).toBe(0)
    const run = await fp(clone, 'merge', 'feature', '--json')
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'merged', heldBack: ['.git/hooks/post-merge'] })
    expect(readFileSync(join(clone, 'b.txt'), 'utf8')).toBe('b\n')
    expect(existsSync(join(clone, '.git/hooks/post-merge'))).toBe(false)
    const shown = await fp(clone, 'show', 'HEAD:.git/hooks/post-merge')
    expect(shown.code).not.toBe(0)
  })

  it('refuses object shard directories that are symlinks (exit 5): no object is written where they lead', async () => {
    const { dir, state } = await snapshotted()
    const outside = tempDir('shards')
    if (user === 'nobody') giveToNobody(outside)
    // the empty ones (the store's own objects stay readable); c.txt's blob lands in one of them
    for (const shard of readdirSync(state('objects/sha256')).filter((s) => readdirSync(state(`objects/sha256/${s}`)).length === 0)) {
      rmSync(state(`objects/sha256/${shard}`), { recursive: true })
      symlinkSync(outside, state(`objects/sha256/${shard}`))
    }
    writeFileSync(join(dir, 'c.txt'), 'new\n')
    await refused(dir, /objects\/sha256\/[0-9a-f]{2} is not a directory \(a symlink\?\): refusing to write objects there/, 'snapshot', '-m', 'x')
    expect(readdirSync(outside)).toEqual([])
  })

  it("a fork of a pulled image is from elsewhere too: checking out its child holds back the pulled image's git files", async () => {
    const { dir: author } = await storeWorkspace({ 'a.txt': 'a\n', '.git/config': '[core]\n\tfsmonitor = "echo pwned"\n', '.git/hooks/post-checkout': HOOK })
    await snapshotWorkspace({ dir: author })
    const layout = tempDir('layout')
    expect((await runCli(['push', 'HEAD', `file://${layout}:v1`], { cwd: author })).code).toBe(0)
    if (user === 'nobody') giveToNobody(layout)
    const { dir } = await snapshotted()
    expect((await fp(dir, 'pull', `file://${layout}:v1`, '--tag', 'theirs')).code).toBe(0)
    const forked = await fp(dir, 'fork', 'theirs', '-n', '1', '--json')
    expect(forked.code, forked.stderr).toBe(0)
    const [child] = (JSON.parse(forked.stdout) as { children: Array<{ id: string }> }).children
    const out = join(tempDir('out'), 'o')
    if (user === 'nobody') giveToNobody(dirname(out))
    const run = await fp(dir, 'checkout', child!.id, '--into', out)
    expect([run.code, run.stdout], run.stderr).toEqual([0, expect.stringMatching(heldGitFiles)])
    expect(['.git/config', '.git/hooks/post-checkout'].map((p) => existsSync(join(out, p)))).toEqual([false, false])
  })

  it("refuses a workspace's .forkpoint that is a symlink (exit 5): init makes no store where it leads", async () => {
    const dir = tempDir('ws')
    const elsewhere = tempDir('elsewhere')
    if (user === 'nobody') giveToNobody(elsewhere)
    symlinkSync(elsewhere, join(dir, '.forkpoint'))
    await refused(dir, /\.forkpoint is a symlink: a workspace's store must be a directory of it/, 'init')
    expect(readdirSync(elsewhere)).toEqual([])
  })

  it('a .forkpoint that is a file is no store (exit 2), and a store whose refs is a file is refused at init (exit 5), not exit 6', async () => {
    const file = tempDir('ws')
    writeFileSync(join(file, '.forkpoint'), 'x')
    const run = await fp(file, 'status')
    expect([run.code, run.stderr]).toEqual([2, expect.stringMatching(/no forkpoint store in/)])
    const refs = tempDir('ws')
    mkdirSync(join(refs, '.forkpoint'))
    writeFileSync(join(refs, '.forkpoint/refs'), 'x')
    await refused(refs, /\.forkpoint\/refs is not a directory/, 'init')
  })
})
