import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Digest, Store, checkout, log, verify } from '../../src/index.js'
import { readReflog } from '../../src/store/reflog.js'
import { LIB, fp, runNode } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

type Json = Record<string, any>

/** A workspace of `n` small files whose content names the workspace. */
async function workspaceOf(label: string, n: number): Promise<string> {
  const files: Record<string, string> = {}
  for (let i = 0; i < n; i++) files[`d${i % 10}/f${i}.txt`] = `${label} file ${i}\n`
  return makeWorkspace(files)
}

describe('concurrent snapshot processes on one store', () => {
  it('all succeed, all land in one linear history, the store verifies', async () => {
    const storeDir = join(tempDir('shared'), 'store')
    const first = await workspaceOf('ws0', 1)
    expect((await fp(first, 'init', '--store', storeDir)).code).toBe(0)
    const workspaces = await Promise.all(['ws1', 'ws2', 'ws3', 'ws4'].map((l) => workspaceOf(l, 300)))

    const results = await Promise.all(workspaces.map((ws, i) => fp(ws, 'snapshot', '--store', storeDir, '-m', `writer ${i}`, '--json')))
    for (const r of results) expect(r.code, r.stderr).toBe(0)
    const snaps = results.map((r) => JSON.parse(r.stdout) as Json)
    for (const s of snaps) expect(s['created']).toBe(true)
    const ids = snaps.map((s) => s['id'] as Digest)
    expect(new Set(ids).size).toBe(4)

    const store = await Store.open(storeDir)
    const history = await log({ store })
    expect(history.map((e) => e.id).sort()).toEqual([...ids].sort())
    // Linear: each entry's only parent is the next one; the oldest has none.
    history.forEach((e, i) => expect(e.parents).toEqual(i + 1 < history.length ? [history[i + 1]!.id] : []))
    // Every writer's own tree is what it snapshot.
    for (const [i, s] of snaps.entries()) expect(history.find((e) => e.id === s['id'])!.message).toBe(`writer ${i}`)
    expect(await verify({ store })).toMatchObject({ ok: true, problems: [] })
    expect((await readReflog(store, 'refs/heads/main')).map((e) => e.new).sort()).toEqual([...ids].sort())
  })

  it('two processes snapshotting the same workspace both succeed, one the parent of the other', async () => {
    const ws = await workspaceOf('same', 200)
    expect((await fp(ws, 'init')).code).toBe(0)
    const [a, b] = await Promise.all(['a', 'b'].map((m) => fp(ws, 'snapshot', '--allow-empty', '-m', m, '--json')))
    expect(a!.code, a!.stderr).toBe(0)
    expect(b!.code, b!.stderr).toBe(0)
    const [sa, sb] = [JSON.parse(a!.stdout) as Json, JSON.parse(b!.stdout) as Json]
    const store = await Store.open(join(ws, '.forkpoint'))
    const history = await log({ store })
    expect(history).toHaveLength(2)
    expect(history[0]!.parents).toEqual([history[1]!.id])
    expect([sa['id'], sb['id']].sort()).toEqual(history.map((e) => e.id).sort())
    expect((await verify({ store })).ok).toBe(true)
  })
})

/** Snapshots repeatedly for `ms`, each time with new content, and leaves garbage around for gc. */
const WRITER = `
const [lib, dir, ms] = process.argv.slice(2)
const { snapshotWorkspace, openStore } = await import(lib)
const { writeFile, mkdir } = await import('node:fs/promises')
const { store } = await openStore({ cwd: dir })
const made = []
const end = Date.now() + Number(ms)
for (let i = 0; Date.now() < end || i < 5; i++) {
  await writeFile(dir + '/iter.txt', 'iteration ' + i + '\\n')
  await mkdir(dir + '/gen/' + i, { recursive: true })
  for (let j = 0; j < 20; j++) await writeFile(dir + '/gen/' + i + '/' + j + '.txt', 'content ' + i + '.' + j + '\\n')
  const snap = await snapshotWorkspace({ dir, message: 'iteration ' + i })
  made.push({ id: snap.id, iteration: i })
  await store.writeBlob(Buffer.from('garbage ' + i + ' ' + Math.random()))
}
console.log(JSON.stringify(made))
`

/** Runs gc back to back until the writer is done (a stop file appears). */
const COLLECTOR = `
const [lib, storeDir, stopFile] = process.argv.slice(2)
const { Store, gc } = await import(lib)
const { access } = await import('node:fs/promises')
const store = await Store.open(storeDir)
let runs = 0, removed = 0
for (;;) {
  const stop = await access(stopFile).then(() => true, () => false)
  const r = await gc({ store })
  runs++
  removed += r.removed.length
  if (stop) break
}
console.log(JSON.stringify({ runs, removed }))
`

describe('gc under a concurrent writer', () => {
  it('loses nothing reachable: every snapshot verifies and checks out', async () => {
    const ws = await makeWorkspace({ 'base.txt': 'base' })
    expect((await fp(ws, 'init')).code).toBe(0)
    const scripts = tempDir('scripts')
    await fs.writeFile(join(scripts, 'writer.mjs'), WRITER)
    await fs.writeFile(join(scripts, 'collector.mjs'), COLLECTOR)
    const stopFile = join(scripts, 'stop')
    const storeDir = join(ws, '.forkpoint')

    const collector = runNode([join(scripts, 'collector.mjs'), LIB, storeDir, stopFile], { cwd: ws })
    const writer = await runNode([join(scripts, 'writer.mjs'), LIB, ws, '4000'], { cwd: ws })
    await fs.writeFile(stopFile, '')
    const gcRun = await collector
    expect(writer.code, writer.stderr).toBe(0)
    expect(gcRun.code, gcRun.stderr).toBe(0)
    const made = JSON.parse(writer.stdout) as Array<{ id: Digest; iteration: number }>
    const gcStats = JSON.parse(gcRun.stdout) as { runs: number; removed: number }
    expect(made.length).toBeGreaterThanOrEqual(5)
    expect(gcStats.runs).toBeGreaterThanOrEqual(2) // gc really ran while snapshots were written (how often depends on load)
    expect(gcStats.removed).toBeGreaterThan(0) // and really removed things (the garbage)

    const store = await Store.open(storeDir)
    expect(await verify({ store })).toMatchObject({ ok: true, problems: [] })
    const history = await log({ store })
    expect(history.map((e) => e.id)).toEqual([...made].reverse().map((m) => m.id))
    const reflog = (await readReflog(store, 'HEAD')).map((e) => e.new)
    expect(reflog).toEqual(made.map((m) => m.id))
    for (const { id, iteration } of made) {
      const into = join(tempDir('gc-co'), 'out')
      await checkout({ dir: ws, id, into })
      expect(await fs.readFile(join(into, 'iter.txt'), 'utf8')).toBe(`iteration ${iteration}\n`)
      expect(await fs.readFile(join(into, `gen/${iteration}/19.txt`), 'utf8')).toBe(`content ${iteration}.19\n`)
      expect((await fs.readdir(join(into, 'gen'))).length).toBe(iteration + 1)
    }
    // And through the CLI, the newest one.
    const cli = await fp(ws, 'checkout', made.at(-1)!.id, '--into', join(tempDir('gc-cli'), 'out'))
    expect(cli.code, cli.stderr).toBe(0)
  }, 120_000)
})
