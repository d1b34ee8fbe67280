import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { Recorder, openEffects, snapshotAgent } from '../../src/index.js'
import { noteRunningSandbox } from '../../src/branch/run/runningSandboxes.js'
import { recordExploration } from '../../src/patterns/explorations.js'
import type { OperationContext } from '../../src/operations/operation.js'
import { OPERATIONS, findOperation } from '../../src/operations/table.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

const ctx: OperationContext = { signal: new AbortController().signal, policy: null, env: process.env }

/**
 * Run an operation of the table on a workspace and hold its result to the operation's output
 * schema: it parses, and parsing leaves it whole (an object schema drops the fields it does not
 * describe, so a field missing from the schema shows as a difference).
 */
async function described<T = Record<string, unknown>>(dir: string, name: string, args: Record<string, unknown> = {}, { query = false } = {}): Promise<T> {
  const op = findOperation(OPERATIONS, name, { query })
  if (!op) throw new Error(`no operation ${name}`)
  const result = await op.run({ dir }, args, ctx)
  const parsed = op.output.safeParse(result)
  if (!parsed.success) expect.fail(`${name}: the result does not match the output schema:\n${z.prettifyError(parsed.error)}\n${JSON.stringify(result, null, 1)}`)
  expect(parsed.data, `${name}: fields of the result its output schema does not describe`).toEqual(result)
  return result as T
}

const view = <T = Record<string, unknown>>(dir: string, name: string, args: Record<string, unknown> = {}) => described<T>(dir, name, args, { query: true })

type Image = { id: string }

describe("every operation's output schema describes what its handler returns", () => {
  it('workspace: snapshot, status, diff (files and patch), log, checkout (in place, paths), scan', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n', 'dir/b.txt': 'b\n', link: { symlink: 'a.txt' } })
    const one = await described<Image>(dir, 'snapshot', { message: 'one' })
    await fs.writeFile(join(dir, 'a.txt'), 'a changed\n')
    await fs.writeFile(join(dir, 'c.txt'), 'c\n')
    await fs.rm(join(dir, 'dir/b.txt'))
    expect(await described(dir, 'status')).toMatchObject({ clean: false, merge: null, commit: null })
    await described(dir, 'diff', { a: one.id })
    const two = await described<Image>(dir, 'snapshot', { message: 'two' })
    expect(await described(dir, 'diff', { a: one.id, b: two.id })).toMatchObject({ summary: { added: 1, deleted: 1, modified: 1 } })
    expect(await described(dir, 'diff', { a: one.id, b: two.id, patch: true })).toMatchObject({ patchTruncated: false })
    expect(await described(dir, 'log', { all: true })).toMatchObject({ entries: [{ id: two.id }, { id: one.id }] })
    expect(await described(dir, 'checkout', { id: one.id })).toMatchObject({ mode: 'in-place' })
    expect(await described(dir, 'status')).toMatchObject({ headName: null, head: one.id, clean: true })
    expect(await described(dir, 'checkout', { id: two.id, into: join(tempDir('into'), 'copy') })).toMatchObject({ mode: 'into' })
    expect(await described(dir, 'checkout', { id: two.id, paths: ['c.txt'] })).toMatchObject({ mode: 'paths', paths: ['c.txt'] })
    expect(await described(dir, 'scan', { respectGitignore: false })).toMatchObject({ symlinks: [{ path: 'link', target: 'a.txt' }] })
  })

  it('branches: branch, commit, a commit stopped on a conflict (status, commit_abort, commit_continue), abort, the live branches', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    await described(dir, 'snapshot')
    const made = await described<{ path: string }>(dir, 'branch', { name: 'try', backend: 'copy' })
    expect(await described(dir, 'branch_list')).toMatchObject({ branches: [{ name: 'try', path: made.path }] })
    await fs.writeFile(join(made.path, 'new.txt'), 'new\n')
    expect(await described(dir, 'commit', { name: 'try' })).toMatchObject({ written: ['new.txt'] })

    const clash = await described<{ path: string }>(dir, 'branch', { name: 'clash', backend: 'copy' })
    await fs.writeFile(join(clash.path, 'a.txt'), 'branch\n')
    await fs.writeFile(join(dir, 'a.txt'), 'workspace\n')
    const stop = async () => expect(described(dir, 'commit', { name: 'clash' })).rejects.toThrow(/conflict/)
    await stop()
    expect(await described(dir, 'status')).toMatchObject({ commit: { branch: 'clash', conflicts: ['a.txt'] } })
    expect(await described(dir, 'commit_abort', { name: 'clash' })).toMatchObject({ name: 'clash' })
    await stop()
    await fs.writeFile(join(dir, 'a.txt'), 'resolved\n')
    expect(await described(dir, 'commit_continue', { name: 'clash' })).toMatchObject({ name: 'clash' })

    const live = await described<{ path: string }>(dir, 'branch', { name: 'live', backend: 'copy' })
    await fs.writeFile(join(live.path, 'live.txt'), 'live\n')
    const running = await noteRunningSandbox(store, { branch: null, command: ['sleep', '1'] })
    try {
      expect(await view(dir, 'branches')).toMatchObject({
        branches: [{ name: 'live', changes: [{ path: 'live.txt', type: 'put' }] }],
        workspace: {
          running: [{ command: ['sleep', '1'] }],
          changes: [
            { path: 'a.txt', status: 'modified' },
            { path: 'new.txt', status: 'added' },
          ],
        },
      })
    } finally {
      await running.done()
    }
    expect(await described(dir, 'abort', { name: 'live' })).toMatchObject({ aborted: 'live', dropped: [] })
  })

  it('images: fork, merge (up to date, fast-forward, merged, conflict), merge_abort, merge_continue, show', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n', 'dir/b.txt': 'b\n', link: { symlink: 'a.txt' } })
    const base = await described<Image>(dir, 'snapshot')
    const { children } = await described<{ children: Image[] }>(dir, 'fork', { id: base.id, count: 2 })
    expect(await described(dir, 'merge', { from: base.id })).toMatchObject({ outcome: 'up-to-date' })
    expect(await described(dir, 'merge', { from: children[0]!.id })).toMatchObject({ outcome: 'fast-forward' })
    expect(await view(dir, 'graph')).toMatchObject({ total: 3 })
    expect(await view(dir, 'image', { id: children[1]!.id })).toMatchObject({ fork: { of: base.id }, parents: [base.id] })

    const diverge = async (theirs: Record<string, string>, ours: Record<string, string>): Promise<Image> => {
      const head = (await described<{ head: string }>(dir, 'status')).head
      await described(dir, 'checkout', { id: head })
      for (const [path, text] of Object.entries(theirs)) await fs.writeFile(join(dir, path), text)
      const theirImage = await described<Image>(dir, 'snapshot', { message: 'theirs' })
      await described(dir, 'checkout', { id: 'main' })
      for (const [path, text] of Object.entries(ours)) await fs.writeFile(join(dir, path), text)
      await described(dir, 'snapshot', { message: 'ours' })
      return theirImage
    }
    expect(await described(dir, 'merge', { from: (await diverge({ 'theirs.txt': 't\n' }, { 'ours.txt': 'o\n' })).id })).toMatchObject({ outcome: 'merged' })
    const clash = await diverge({ 'a.txt': 'theirs\n' }, { 'a.txt': 'ours\n' })
    const conflict = { outcome: 'conflict', inProgress: true, conflicts: [{ path: 'a.txt', kind: 'content' }] }
    expect(await described(dir, 'merge', { from: clash.id })).toMatchObject(conflict)
    expect(await described(dir, 'status')).toMatchObject({ merge: { theirs: clash.id, conflicts: ['a.txt'] } })
    await described(dir, 'merge_abort')
    expect(await described(dir, 'merge', { from: clash.id })).toMatchObject(conflict)
    await fs.writeFile(join(dir, 'a.txt'), 'both\n')
    const merged = await described<Image>(dir, 'merge_continue')

    const shown = await described<{ world: { tree: string } }>(dir, 'show', { id: merged.id })
    const file = await described<{ content: string }>(dir, 'show', { id: `${merged.id}:a.txt` })
    expect(await described(dir, 'show', { id: file.content })).toMatchObject({ kind: 'blob', text: 'both\n' })
    expect(await described(dir, 'show', { id: `${merged.id}:link` })).toMatchObject({ kind: 'symlink', target: 'a.txt' })
    expect(await described(dir, 'show', { id: `${merged.id}:dir` })).toMatchObject({ kind: 'dir', entries: [{ name: 'b.txt' }] })
    expect(await described(dir, 'show', { id: shown.world.tree })).toMatchObject({ kind: 'tree' })
  })

  it('runs, effects and the web view: runs (show, export, rm), graph, image, tree, changes, ledger, run, rundiff, explorations', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    const record = async (answer: string) => {
      const rec = await Recorder.start({ entrypoint: 'unit', dir, env: {} })
      await rec.llm('plan', { prompt: 'hi' }, () => ({ text: answer, tokens: [1, 2] }))
      await rec
        .tool('search', { q: 'x' }, () => {
          throw new Error('offline')
        })
        .catch(() => undefined)
      const done = await rec.finish()
      if (done.kind !== 'recorded') throw new Error('expected a recorded run')
      return done.run.runId
    }
    const first = await record('one')
    const traced = await described<Image>(dir, 'snapshot', { message: 'traced' })
    const second = await record('two')

    const effects = await openEffects({ dir, env: {} })
    await effects.tool('weather.get', async (city: string) => ({ city, sunny: true }), { class: 'read' })('Oslo')
    await fs.writeFile(join(dir, 'a.txt'), 'a with effects\n')
    const withEffects = await snapshotAgent({ dir, effects: await effects.ledger(), message: 'effects' })
    await recordExploration(store, {
      pattern: 'bestOfN',
      started: new Date(),
      outcome: {
        committed: true,
        winner: 1,
        matches: [],
        results: [
          { index: 0, status: 'failed', success: false, score: null, error: 'exit 1', branch: null, branchPath: null, durationMs: 3 },
          { index: 1, status: 'succeeded', success: true, score: 0.9, branch: null, branchPath: null, durationMs: 4 },
        ],
      },
      error: null,
    })

    expect(await described(dir, 'runs')).toMatchObject({ runs: [{ runId: second }, { runId: first }] })
    expect(await view(dir, 'runs')).toMatchObject({ runs: [{ runId: second }, { runId: first }] })
    expect(await view(dir, 'graph')).toMatchObject({ total: 2, nodes: [{ id: withEffects.id }, { id: traced.id }] })
    expect(await view(dir, 'image', { id: traced.id })).toMatchObject({ layers: [{ layer: 'world' }, { layer: 'trace' }] })
    expect(await described(dir, 'show', { id: traced.id })).toMatchObject({ trace: { runId: first } })
    expect(await view(dir, 'tree', { id: withEffects.id })).toMatchObject({ entries: [{ name: 'a.txt' }] })
    expect(await view(dir, 'changes', { id: withEffects.id })).toMatchObject({ files: { total: 1 } })
    expect(await view(dir, 'ledger', { id: withEffects.id })).toMatchObject({ entries: [{ tool: 'weather.get', status: 'executed' }] })
    expect(await described(dir, 'effects', { id: withEffects.id })).toMatchObject({ entries: [{ tool: 'weather.get', status: 'executed' }] })
    expect(await described(dir, 'effects', { pending: true })).toMatchObject({ source: 'workspace', entries: [] })
    expect(await described(dir, 'effects_recover')).toEqual({ sent: [], resent: [] })
    expect(await view(dir, 'run', { run: first })).toMatchObject({ total: 2, steps: [{ type: 'llm' }, { type: 'tool', error: { message: 'offline' } }] })
    expect(await view(dir, 'rundiff', { a: first, b: second })).toMatchObject({ status: 'output_divergence' })
    expect(await described(dir, 'diff', { a: first, b: second })).toMatchObject({ trace: { status: 'output_divergence' } })
    expect(await view(dir, 'explorations')).toMatchObject({ explorations: [{ pattern: 'bestOfN', winner: 1 }] })
    expect(await described(dir, 'runs_show', { run: first })).toMatchObject({ run: { runId: first, steps: [{ type: 'llm' }, { type: 'tool', error: { message: 'offline' } }] } })
    const exported = join(tempDir('export'), 'first.run.json')
    expect(await described(dir, 'runs_export', { run: first, out: exported })).toEqual({ artifact: exported, runId: first, steps: 2 })
    expect(await described(dir, 'runs_show', { run: exported })).toMatchObject({ run: { runId: first } })
    expect(await described(dir, 'runs_rm', { runs: [second] })).toEqual({ removed: [second] })
  })

  it('the store: tag, tag_list, tag_delete, verify, gc (dry run and not)', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    const image = await described<Image>(dir, 'snapshot')
    expect(await described(dir, 'tag', { name: 'v1' })).toEqual({ name: 'v1', id: image.id })
    expect(await described(dir, 'tag_list')).toEqual({ tags: [{ name: 'v1', id: image.id }] })
    expect(await described(dir, 'tag_delete', { name: 'v1' })).toEqual({ deleted: 'v1' })
    expect(await described(dir, 'verify')).toMatchObject({ ok: true, problems: [], ledgers: { problems: [] } })
    const garbage = await store.writeBlob(Buffer.from('unreachable'))
    expect(await described(dir, 'gc', { dryRun: true })).toMatchObject({ removed: 1, removedIds: [garbage] })
    expect(await described(dir, 'gc', { prune: 'now' })).toMatchObject({ removed: 1, removedIds: [garbage] })
  })

  it('remotes: push and pull through a file remote', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const image = await described<Image>(dir, 'snapshot')
    const remote = `file://${tempDir('remote')}:v1`
    expect(await described(dir, 'push', { id: image.id, remote })).toMatchObject({ id: image.id, tag: 'v1' })
    expect(await described(dir, 'pull', { remote, tag: 'pulled' })).toMatchObject({ id: image.id, tag: 'pulled' })
  })
})
