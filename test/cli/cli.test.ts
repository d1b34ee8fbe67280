import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Store } from '../../src/index.js'
import { sha256 } from '../../src/objects/digest.js'
import { initCommand } from '../../src/cli/commands/init.js'
import { snapshotAgent } from '../../src/image/snapshotAgent.js'
import { fp, fpJson } from '../helpers/cli.js'
import { collidingBlobs } from '../helpers/ids.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { dirState } from '../helpers/workspace.js'
import { callOperation, renderingOf } from '../helpers/callOperation.js'

type Json = Record<string, any>

/** One line on stderr, and it names the problem. */
function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n')
  expect(lines, stderr).toHaveLength(1)
  return lines[0]!
}

describe('forkpoint CLI end to end', () => {
  it('init, snapshot, status, log, show, diff, checkout, tag, gc, verify: human and --json', async () => {
    const ws = await makeWorkspace({ 'a.txt': 'one\n', 'bin/run': { content: '#!/bin/sh\n', mode: 0o755 }, ln: { symlink: 'a.txt' }, empty: { dir: true } })

    const init = await fpJson(ws, 'init')
    expect(init.code).toBe(0)
    expect(init.json).toMatchObject({ schemaVersion: 1, created: true, storeDir: join(ws, '.forkpoint') })
    expect((await fpJson(ws, 'init')).json).toMatchObject({ created: false })

    const human = await fp(ws, 'snapshot', '-m', 'first', '--agent', 'agent-7', '--tag', 'v1')
    expect(human.code).toBe(0)
    const first = human.stdout.trim()
    expect(first).toMatch(/^sha256:[0-9a-f]{64}$/) // the id, and only the id, on stdout

    const unchanged = await fpJson<Json>(ws, 'snapshot')
    expect(unchanged.json).toMatchObject({ schemaVersion: 1, id: first, created: false })

    const clean = await fpJson<Json>(ws, 'status')
    expect(clean.json).toMatchObject({ schemaVersion: 1, clean: true, headName: 'main', head: first, changes: [] })
    expect((await fp(ws, 'status')).stdout).toMatch(/clean/)

    await fs.writeFile(join(ws, 'a.txt'), 'two\n')
    await fs.writeFile(join(ws, 'new.txt'), 'new')
    const dirty = await fpJson<Json>(ws, 'status')
    expect(dirty.json['clean']).toBe(false)
    expect(dirty.json['changes'].map((c: Json) => [c.path, c.status])).toEqual([
      ['a.txt', 'modified'],
      ['new.txt', 'added'],
    ])
    const statusText = (await fp(ws, 'status')).stdout
    expect(statusText).toMatch(/M a\.txt/)
    expect(statusText).toMatch(/A new\.txt/)

    // diff against the workspace: exit 1 when different
    const wdiff = await fpJson<Json>(ws, 'diff', 'HEAD')
    expect(wdiff.code).toBe(1)
    expect(wdiff.json).toMatchObject({ schemaVersion: 1, a: first, b: null, summary: { added: 1, modified: 1 } })

    const snap2 = await fpJson<Json>(ws, 'snapshot', '-m', 'second')
    expect(snap2.json).toMatchObject({ schemaVersion: 1, created: true, parents: [first] })
    const second = snap2.json['id'] as string

    const log = await fpJson<Json>(ws, 'log')
    expect(log.json['schemaVersion']).toBe(1)
    expect(log.json['entries'].map((e: Json) => [e.id, e.message, e.agent ?? null, e.refs])).toEqual([
      [second, 'second', null, ['HEAD', 'main']],
      [first, 'first', 'agent-7', ['tag: v1']],
    ])
    const graph = (await fp(ws, 'log', '--graph')).stdout.trim().split('\n')
    expect(graph).toHaveLength(2)
    expect(graph[0]).toMatch(new RegExp(`^\\*\\s+${second.slice(7, 19)} \\(HEAD, main\\) second`))
    expect(graph[1]).toMatch(new RegExp(`^\\*\\s+${first.slice(7, 19)} \\(tag: v1\\) first`))
    expect((await fpJson<Json>(ws, 'log', '-n', '1')).json['entries']).toHaveLength(1)

    const show = await fpJson<Json>(ws, 'show', first.slice(7, 15))
    expect(show.json).toMatchObject({ schemaVersion: 1, id: first, kind: 'snapshot', object: { kind: 'snapshot', meta: { message: 'first', agent: 'agent-7' } } })
    const showBlob = await fpJson<Json>(ws, 'show', sha256('one\n'))
    expect(showBlob.json).toEqual({ schemaVersion: 1, id: sha256('one\n'), kind: 'blob', size: 4, text: 'one\n' })

    const diff = await fpJson<Json>(ws, 'diff', first, second)
    expect(diff.code).toBe(1)
    expect(diff.json['changes']).toEqual([
      { path: 'a.txt', status: 'modified', old: { type: 'file', mode: 0o644, size: 4 }, new: { type: 'file', mode: 0o644, size: 4 } },
      { path: 'new.txt', status: 'added', new: { type: 'file', mode: 0o644, size: 3 } },
    ])
    const diffText = await fp(ws, 'diff', 'v1', 'HEAD')
    expect(diffText.code).toBe(1)
    expect(diffText.stdout).toMatch(/1 added, 0 deleted, 1 modified/)
    const same = await fpJson<Json>(ws, 'diff', 'HEAD', second)
    expect(same.code).toBe(0)
    expect(same.json['changes']).toEqual([])
    expect((await fp(ws, 'diff', 'HEAD')).code).toBe(0)

    // checkout --into: an exact copy
    const into = join(tempDir('cli-into'), 'copy')
    const co = await fpJson<Json>(ws, 'checkout', 'v1', '--into', into)
    expect(co.code).toBe(0)
    expect(co.json).toMatchObject({ schemaVersion: 1, id: first, mode: 'into', target: into })
    expect(await fs.readFile(join(into, 'a.txt'), 'utf8')).toBe('one\n')
    expect(await fs.readlink(join(into, 'ln'))).toBe('a.txt')
    expect((await fs.stat(join(into, 'bin/run'))).mode & 0o777).toBe(0o755)
    expect(await fs.readdir(join(into, 'empty'))).toEqual([])

    // checkout in place: refused when dirty (exit 3), forced with --force
    await fs.writeFile(join(ws, 'a.txt'), 'uncommitted')
    const refused = await fp(ws, 'checkout', 'v1')
    expect(refused.code).toBe(3)
    expect(oneLine(refused.stderr)).toMatch(/uncommitted changes.*--force/)
    expect(await fs.readFile(join(ws, 'a.txt'), 'utf8')).toBe('uncommitted')
    const forced = await fpJson<Json>(ws, 'checkout', 'v1', '--force')
    expect(forced.json).toMatchObject({ schemaVersion: 1, id: first, mode: 'in-place' })
    expect(await dirState(ws)).toEqual(await dirState(into))
    expect((await fp(ws, 'checkout', 'main')).code).toBe(0)
    expect(await fs.readFile(join(ws, 'new.txt'), 'utf8')).toBe('new')

    // tags
    expect((await fpJson<Json>(ws, 'tag', 'v2')).json).toEqual({ schemaVersion: 1, name: 'v2', id: second })
    expect((await fpJson<Json>(ws, 'tag', 'old', 'HEAD~1')).json).toMatchObject({ id: first })
    expect((await fpJson<Json>(ws, 'tag')).json).toEqual({
      schemaVersion: 1,
      tags: [
        { name: 'old', id: first },
        { name: 'v1', id: first },
        { name: 'v2', id: second },
      ],
    })
    expect((await fpJson<Json>(ws, 'tag', '-d', 'old')).json).toEqual({ schemaVersion: 1, deleted: 'old' })
    expect(
      (await fp(ws, 'tag')).stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]),
    ).toEqual(['v1', 'v2'])
    const badTag = await fp(ws, 'tag', '../escape')
    expect(badTag.code).toBe(2)
    expect(oneLine(badTag.stderr)).toMatch(/invalid ref name/)

    // gc and verify
    const store = await Store.open(join(ws, '.forkpoint'))
    const garbage = await store.writeBlob(Buffer.from('garbage'))
    const gc = await fpJson<Json>(ws, 'gc')
    expect(gc.json).toMatchObject({ schemaVersion: 1, removed: 1, removedIds: [garbage] })
    const verify = await fpJson<Json>(ws, 'verify')
    expect(verify.code).toBe(0)
    expect(verify.json).toMatchObject({ schemaVersion: 1, ok: true, problems: [] })
    expect((await fp(ws, 'verify')).stdout).toMatch(/0 problems/)
  })

  it('works from a subdirectory (the store is found walking up) and with --store / -C', async () => {
    const ws = await makeWorkspace({ 'sub/deeper/f.txt': 'f' })
    expect((await fp(ws, 'init')).code).toBe(0)
    const snap = await fp(join(ws, 'sub/deeper'), 'snapshot')
    expect(snap.code).toBe(0)
    const elsewhere = tempDir('elsewhere')
    const log = await fpJson<Json>(elsewhere, 'log', '-C', ws)
    expect(log.json['entries'][0].id).toBe(snap.stdout.trim())
    const viaStore = await fpJson<Json>(elsewhere, 'log', '--store', join(ws, '.forkpoint'))
    expect(viaStore.json['entries'][0].id).toBe(snap.stdout.trim())
  })
})

describe('forkpoint CLI errors: one line on stderr, the right exit code', () => {
  it('not a store -> 2: every command refuses it (in-process); the CLI prints one line, or the error as JSON', async () => {
    const dir = tempDir('nostore')
    const calls = [
      () => callOperation('status', { dir }),
      () => snapshotAgent({ dir }),
      () => callOperation('log', { dir }),
      () => callOperation('verify', { dir }),
      () => callOperation('gc', { dir }),
      () => callOperation('tag_list', { dir }),
      () => callOperation('show', { dir, id: 'HEAD' }),
    ]
    for (const call of calls)
      await expect(call()).rejects.toMatchObject({ code: 'StoreNotFoundError', exitCode: 2, message: expect.stringMatching(/no forkpoint store.*forkpoint init/) })
    const r = await fp(dir, 'status')
    expect(r.code).toBe(2)
    expect(oneLine(r.stderr)).toMatch(/no forkpoint store.*forkpoint init/)
    expect(r.stdout).toBe('')
    const json = await fp(dir, 'status', '--json')
    expect(json.code).toBe(2)
    expect(JSON.parse(oneLine(json.stderr))).toMatchObject({ error: { code: 'StoreNotFoundError', exitCode: 2 } })
    expect(json.stdout).toBe('')
  })

  it('unknown id -> 2, ambiguous short id -> 2 naming the ambiguity, unknown command or flag -> 2', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    await initCommand({ dir })
    await snapshotAgent({ dir })
    const calls = [
      () => callOperation('show', { dir, id: 'deadbeef' }),
      () => callOperation('checkout', { dir, id: 'nope', into: join(tempDir('x'), 'y') }),
      () => callOperation('diff', { dir, a: 'HEAD~5' }),
      () => callOperation('tag', { dir, name: 't', id: 'missing' }),
      () => callOperation('log', { dir, ref: sha256('x') }),
    ]
    for (const call of calls) await expect(call()).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/unknown id|no object|goes past the first snapshot/) })
    const unknown = await fp(dir, 'show', 'deadbeef')
    expect(unknown.code).toBe(2)
    expect(oneLine(unknown.stderr)).toMatch(/^forkpoint: .*unknown id/)

    const store = await Store.open(join(dir, '.forkpoint'))
    const [x, y] = collidingBlobs()
    const dx = await store.writeBlob(Buffer.from(x))
    await store.writeBlob(Buffer.from(y))
    const amb = await fp(dir, 'show', dx.slice(7, 11))
    expect(amb.code).toBe(2)
    expect(oneLine(amb.stderr)).toMatch(new RegExp(`short id ${dx.slice(7, 11)} is ambiguous: it matches 2 objects`))
    const ambJson = await fp(dir, 'show', dx.slice(7, 11), '--json')
    expect(JSON.parse(oneLine(ambJson.stderr))).toMatchObject({ error: { code: 'AmbiguousIdError', exitCode: 2 } })

    const unknownCommand = await fp(dir, 'frobnicate')
    expect(unknownCommand.code).toBe(2)
    expect(unknownCommand.stderr).toMatch(/unknown command/)
    expect((await fp(dir, 'snapshot', '--no-such-flag')).code).toBe(2)
  })

  it('corrupt object -> 5 from verify (problems listed) and from any read', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'precious', 'b.txt': 'b' })
    await initCommand({ dir })
    const snap = (await snapshotAgent({ dir })).id
    const store = await Store.open(join(dir, '.forkpoint'))
    await fs.writeFile(store.objectPath(sha256('precious')), 'tampered')
    await fs.rm(store.objectPath(sha256('b')))

    const verified = await callOperation('verify', { dir })
    expect(verified).toMatchObject({ ok: false })
    expect(verified.problems).toHaveLength(2)
    expect(renderingOf('verify').exit!(verified)).toMatchObject({ code: 'StoreCorruptError', exitCode: 5 })
    const verify = await fp(dir, 'verify')
    expect(verify.code).toBe(5)
    expect(verify.stdout).toContain(`corrupt: ${sha256('precious')} (hashes to ${sha256('tampered')})`)
    expect(verify.stdout).toContain(`missing: ${sha256('b')}`)
    expect(oneLine(verify.stderr)).toMatch(/2 bad or missing objects/)
    const verifyJson = await fpJson<Json>(dir, 'verify')
    expect(verifyJson.code).toBe(5)
    expect(verifyJson.json).toMatchObject({ schemaVersion: 1, ok: false })
    expect(verifyJson.json['problems']).toHaveLength(2)

    await expect(callOperation('show', { dir, id: sha256('precious') })).rejects.toMatchObject({ exitCode: 5, message: expect.stringMatching(/corrupt.*forkpoint verify/) })

    // A corrupt snapshot object is caught too, by any command that reads it.
    await fs.writeFile(store.objectPath(snap), '{"kind":"snapshot"}')
    for (const call of [() => callOperation('log', { dir }), () => callOperation('status', { dir }), () => callOperation('diff', { dir, a: 'HEAD' })])
      await expect(call()).rejects.toMatchObject({ exitCode: 5 })
  })

  it('a missing object -> 5 from checkout, nothing left behind', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a', 'b.txt': 'lost' })
    await initCommand({ dir })
    await snapshotAgent({ dir })
    await fs.rm((await Store.open(join(dir, '.forkpoint'))).objectPath(sha256('lost')))
    const parent = tempDir('missing')
    await expect(callOperation('checkout', { dir, id: 'HEAD', into: join(parent, 'out') })).rejects.toMatchObject({
      exitCode: 5,
      message: expect.stringMatching(new RegExp(`${sha256('lost')} is missing.*forkpoint verify`)),
    })
    expect(await fs.readdir(parent)).toEqual([])
  })

  it('unsafe path -> 5', async () => {
    const ws = await makeWorkspace({ 'a.txt': 'a' })
    await initCommand({ dir: ws })
    const store = await Store.open(join(ws, '.forkpoint'))
    const blob = await store.writeBlob(Buffer.from('x'))
    const tree = await store.writeObject({ kind: 'tree', schemaVersion: 1, entries: [{ name: '..', type: 'file', mode: 0o644, size: 1, blob }] })
    const snap = await store.writeObject({ kind: 'snapshot', schemaVersion: 1, parents: [], world: { tree }, meta: { message: 'evil', createdAt: new Date().toISOString() } })
    const target = join(tempDir('unsafe'), 'out')
    await expect(callOperation('checkout', { dir: ws, id: snap, into: target })).rejects.toMatchObject({
      code: 'UnsafePathError',
      exitCode: 5,
      message: expect.stringMatching(/unsafe name/),
    })
    const j = await fp(ws, 'checkout', snap, '--into', target, '--json')
    expect(j.code).toBe(5)
    expect(JSON.parse(oneLine(j.stderr))).toMatchObject({ error: { code: 'UnsafePathError', exitCode: 5 } })
  })
})
