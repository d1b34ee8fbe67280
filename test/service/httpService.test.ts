import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, promises as fs, readFileSync, writeFileSync } from 'node:fs'
import { type IncomingMessage, request } from 'node:http'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { startService, type RunningService } from '../../src/service/httpService.js'
import { gc } from '../../src/store/gc.js'
import { scanWorkspace } from '../../src/world/scan/scanWorkspace.js'
import { CLI, runCli } from '../helpers/cli.js'
import { nonLoopbackAddress } from '../helpers/tlsRegistry.js'
import { tempDir } from '../helpers/tmp.js'
import { conflictingHeads } from '../helpers/conflicting.js'
import { storeWorkspace } from '../helpers/workspace.js'
import { eventually, processesWith } from '../patterns/leftovers.js'

const running: RunningService[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()))
})

async function serve(args: Parameters<typeof startService>[0]): Promise<RunningService> {
  const service = await startService(args)
  running.push(service)
  return service
}

interface Answer {
  status: number
  body: string
  json: () => Record<string, unknown>
}

/** One request to a service at `unix:PATH` or `http://HOST:PORT`. */
function call(address: string, method: string, path: string, { body, headers = {} }: { body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const target = address.startsWith('unix:') ? { socketPath: address.slice(5) } : { host: new URL(address).hostname.replace(/^\[|\]$/g, ''), port: Number(new URL(address).port) }
    const req = request({ ...target, method, path, headers: { 'content-type': 'application/json', ...headers } }, (res: IncomingMessage) => {
      let text = ''
      res.on('data', (d: Buffer) => (text += d.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, json: () => JSON.parse(text) as Record<string, unknown> }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const post = (address: string, op: string, args: object = {}, headers: Record<string, string> = {}) => call(address, 'POST', `/v1/${op}`, { body: JSON.stringify(args), headers })

/** The tree a full scan of the workspace gives, without writing anything. */
async function fullScanTree(dir: string, store: Parameters<typeof scanWorkspace>[0]['store']): Promise<string> {
  return (await scanWorkspace({ store, dir, write: false, respectGitignore: false })).tree
}

describe('forkpoint serve: the operations as JSON endpoints', () => {
  it('answers every operation over its Unix socket, describes them in an OpenAPI document, and words errors as the CLI does', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const service = await serve({ dir })
    expect(service.address).toBe(`unix:${join(dir, '.forkpoint', 'service.sock')}`)
    expect((await fs.stat(service.address.slice(5))).mode & 0o777).toBe(0o600)

    const doc = (await call(service.address, 'GET', '/openapi.json')).json() as {
      openapi: string
      paths: Record<string, { post?: { requestBody: { content: Record<string, { schema: { properties?: object } }> } } }>
    }
    expect(doc.openapi).toBe('3.1.0')
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/v1/health',
        ...[
          ...[
            'snapshot',
            'status',
            'diff',
            'log',
            'checkout',
            'branch',
            'branch_list',
            'commit',
            'commit_continue',
            'commit_abort',
            'abort',
            'run',
            'fork',
            'explore',
            'speculate',
          ],
          ...['merge', 'merge_continue', 'merge_abort', 'runs', 'runs_show', 'runs_rm', 'replay', 'scan', 'show', 'push', 'pull'],
          ...['tag', 'tag_list', 'tag_delete', 'verify', 'gc', 'effects', 'effects_recover'],
        ].map((op) => `/v1/${op}`),
        ...['graph', 'image', 'tree', 'changes', 'ledger', 'runs', 'run', 'rundiff', 'explorations', 'branches'].map((view) => `/v1/view/${view}`),
      ].sort(),
    )
    expect(doc.paths['/v1/checkout']!.post!.requestBody.content['application/json']!.schema.properties).toHaveProperty('force')

    const made = await post(service.address, 'snapshot', { message: 'through the service' })
    expect(made.status).toBe(200)
    const id = made.json()['id'] as string
    expect((await post(service.address, 'status')).json()).toMatchObject({ head: id, clean: true })
    expect((await post(service.address, 'log', { limit: 1 })).json()).toMatchObject({ entries: [{ id, message: 'through the service' }] })
    expect((await post(service.address, 'show', { id })).json()).toMatchObject({ kind: 'snapshot' })

    const cli = spawnSync(CLI, ['checkout', 'nope', '--json'], { cwd: dir, encoding: 'utf8' })
    const refused = await post(service.address, 'checkout', { id: 'nope' })
    expect([refused.status, refused.json()]).toEqual([400, JSON.parse(cli.stderr)])
    expect((await post(service.address, 'log', { limit: 'ten' })).json()).toMatchObject({
      error: { code: 'UsageError', exitCode: 2, message: expect.stringMatching(/^log: limit/) },
    })
    expect((await call(service.address, 'POST', '/v1/snapshot', { body: '{ nope' })).status).toBe(400)
    expect((await post(service.address, 'format')).status).toBe(404)
    await expect(startService({ dir })).rejects.toThrow(/a service already answers/)
  })

  it('on TCP makes a token when given none, writes it 0600 in the store for its owner, and refuses a request without it; --token on the command line is refused', async () => {
    const { dir } = await storeWorkspace({})
    const address = nonLoopbackAddress()!
    expect(address).toBeDefined()
    const cli = spawnSync(CLI, ['serve', '--listen', `${address}:0`, '--token', 'visible-to-all'], { cwd: dir, encoding: 'utf8' })
    expect([cli.status, cli.stderr]).toEqual([2, expect.stringMatching(/--token-file FILE or FORKPOINT_TOKEN/)])

    const service = await serve({ dir, listen: `${address}:0` })
    expect(service.address).toMatch(new RegExp(`^http://${address.replace(/\./g, '\\.')}:\\d+$`))
    expect(service.tokenFile).toBe(join(dir, '.forkpoint', 'service-token'))
    expect((await fs.stat(service.tokenFile!)).mode & 0o777).toBe(0o600)
    const token = readFileSync(service.tokenFile!, 'utf8').trim()
    expect(token).toMatch(/^[\w-]{43}$/)
    expect((await post(service.address, 'status')).status).toBe(401)
    expect((await post(service.address, 'status', {}, { authorization: `Bearer ${token}x` })).status).toBe(401)
    expect((await post(service.address, 'status', {}, { authorization: `Bearer ${token}` })).status).toBe(200)
    await service.close()
    expect(existsSync(service.tokenFile!)).toBe(false)

    const given = randomBytes(16).toString('hex')
    const withGiven = await serve({ dir, listen: '127.0.0.1:0', token: given })
    expect(readFileSync(withGiven.tokenFile!, 'utf8').trim()).toBe(given)
    expect((await post(withGiven.address, 'status', {}, { authorization: `Bearer ${given}` })).status).toBe(200)
  })

  it('streams an operation as server-sent events; a client that goes away mid-stream cancels it, and the service serves on', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const service = await serve({ dir })
    const streamed = await post(service.address, 'snapshot', { message: 'streamed' }, { accept: 'text/event-stream' })
    const events = streamed.body
      .trim()
      .split('\n\n')
      .map((block) => block.split('\n')[0]!.slice('event: '.length))
    expect(events.at(-1)).toBe('result')
    expect(JSON.parse(streamed.body.trim().split('\n').at(-1)!.slice('data: '.length))).toMatchObject({ created: true })

    const marker = `forkpoint-sse-${randomBytes(4).toString('hex')}`
    const req = request({ socketPath: service.address.slice(5), method: 'POST', path: '/v1/run', headers: { accept: 'text/event-stream', 'content-type': 'application/json' } })
    req.on('error', () => undefined)
    req.end(JSON.stringify({ command: ['sh', '-c', `sleep 300 # ${marker}`], net: 'none' }))
    expect(await eventually(() => processesWith(marker).length > 0)).toBe(true)
    req.destroy()
    expect(await eventually(() => processesWith(marker).length === 0)).toBe(true)
    expect((await call(service.address, 'GET', '/v1/health')).json()).toMatchObject({ ok: true })
  })

  it('pushes and pulls, streaming their progress in bytes before the result', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n', 'big.bin': randomBytes(256 * 1024) })
    const outside = tempDir('service-remote') // a layout outside the workspaces: each service is started to allow it
    const remote = `file://${join(outside, 'layout')}:v1`
    const service = await serve({ dir, allowPaths: [outside] })
    const id = (await post(service.address, 'snapshot')).json()['id'] as string
    const events = (body: string) =>
      body
        .trim()
        .split('\n\n')
        .map((block) => ({ event: block.split('\n')[0]!.slice('event: '.length), data: JSON.parse(block.split('\n')[1]!.slice('data: '.length)) as Record<string, unknown> }))
    const pushed = events((await post(service.address, 'push', { id, remote }, { accept: 'text/event-stream' })).body)
    expect(pushed.filter((e) => e.event === 'progress').length).toBeGreaterThan(0)
    expect(pushed.filter((e) => e.event === 'progress').at(-1)!.data).toMatchObject({ bytes: expect.any(Number) })
    expect(pushed.at(-1)).toEqual({ event: 'result', data: expect.objectContaining({ id, remote: expect.stringContaining('layout') }) })

    const other = await storeWorkspace({})
    const elsewhere = await serve({ dir: other.dir, allowPaths: [outside] })
    const pulled = events((await post(elsewhere.address, 'pull', { remote }, { accept: 'text/event-stream' })).body)
    expect(pulled.some((e) => e.event === 'progress')).toBe(true)
    expect(pulled.at(-1)).toEqual({ event: 'result', data: expect.objectContaining({ id, tag: 'v1' }) })
    expect((await post(elsewhere.address, 'show', { id })).json()).toMatchObject({ kind: 'snapshot' })
  })

  it("is where the CLI's plain snapshot goes while it runs; a snapshot with other options, or with no service, runs in the CLI", async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const service = await serve({ dir, scanInFullUpTo: 0 })
    await fs.writeFile(join(dir, 'a.txt'), 'changed\n')
    const viaService = await runCli(['snapshot', '-m', 'from the CLI', '--json'], { cwd: dir })
    expect([viaService.code, JSON.parse(viaService.stdout)]).toEqual([0, expect.objectContaining({ created: true, listedDirs: 0 })])
    expect((await post(service.address, 'log', { limit: 1 })).json()).toMatchObject({ entries: [{ message: 'from the CLI' }] })
    expect((await call(service.address, 'GET', '/v1/health')).json()).toMatchObject({ served: 2 })
    await fs.writeFile(join(dir, 'b.txt'), 'b\n')
    expect((await runCli(['snapshot', '--tag', 'here', '--json'], { cwd: dir })).code).toBe(0)
    expect((await call(service.address, 'GET', '/v1/health')).json()).toMatchObject({ served: 2 })
    await service.close()
    await fs.writeFile(join(dir, 'c.txt'), 'c\n')
    expect((await runCli(['snapshot', '--json'], { cwd: dir })).code).toBe(0) // its socket is gone: the CLI snapshots itself
  })

  it("is where the CLI's plain status goes while it runs, which the watcher answers without a scan", async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n', 'b.txt': 'b\n' })
    await runCli(['snapshot'], { cwd: dir })
    const service = await serve({ dir, scanInFullUpTo: 0 })
    await fs.writeFile(join(dir, 'a.txt'), 'changed\n')
    await fs.rm(join(dir, 'b.txt'))
    const viaService = await runCli(['status', '--json'], { cwd: dir })
    const changes = [
      { path: 'a.txt', status: 'modified' },
      { path: 'b.txt', status: 'deleted' },
    ]
    expect([viaService.code, JSON.parse(viaService.stdout)]).toEqual([0, expect.objectContaining({ clean: false, changes: changes.map((c) => expect.objectContaining(c)) })])
    expect((await call(service.address, 'GET', '/v1/health')).json()).toMatchObject({ served: 1, scan: 'warm' })
    const here = await runCli(['status', '--no-respect-gitignore', '--json'], { cwd: dir }) // an option: the CLI scans itself
    expect(JSON.parse(here.stdout)).toEqual(JSON.parse(viaService.stdout))
    // a workspace of the same store that is not the service's: the service declines (421), the CLI scans itself
    await fs.mkdir(join(dir, 'sub'))
    const elsewhere = await runCli(['status', '--store', join(dir, '.forkpoint'), '--json'], { cwd: join(dir, 'sub') })
    expect([elsewhere.code, JSON.parse(elsewhere.stdout)['workspace']]).toEqual([0, join(dir, 'sub')])
    expect((await call(service.address, 'GET', '/v1/health')).json()).toMatchObject({ served: 1 })
  })

  it("scans a workspace of at most scanInFullUpTo files in full at every snapshot, and a larger one from the watcher's list", async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n', 'b.txt': 'b\n' })
    const service = await serve({ dir, scanInFullUpTo: 2 })
    await fs.writeFile(join(dir, 'c.txt'), 'c\n')
    const small = (await post(service.address, 'snapshot')).json()
    expect(small).toMatchObject({ files: 3, tree: await fullScanTree(dir, store) })
    expect(small['listedDirs']).toBeGreaterThan(0) // a walk: the directory the new file changed is listed
    await fs.writeFile(join(dir, 'd.txt'), 'd\n')
    expect((await post(service.address, 'snapshot')).json()).toMatchObject({ files: 4, listedDirs: 0, tree: await fullScanTree(dir, store) })
    const bad = await runCli(['serve', '--scan-in-full-up-to', 'many'], { cwd: dir })
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('serve: --scan-in-full-up-to must be a whole number, not "many"')])
  })

  it('keeps serving 50 clients at once on loopback', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const service = await serve({ dir, listen: '127.0.0.1:0' })
    const auth = { authorization: `Bearer ${readFileSync(service.tokenFile!, 'utf8').trim()}` }
    const answers = await Promise.all(
      Array.from({ length: 50 }, async (_, client) => {
        const statuses: number[] = []
        for (let round = 0; round < 4; round++) {
          if (client % 10 === 0) await fs.writeFile(join(dir, `c${client}.txt`), `round ${round}\n`)
          statuses.push((await post(service.address, client % 10 === 0 ? 'snapshot' : 'status', {}, auth)).status)
        }
        return statuses
      }),
    )
    expect(answers.flat().every((s) => s === 200)).toBe(true)
    expect((await call(service.address, 'GET', '/v1/health', { headers: auth })).json()).toMatchObject({ served: 200 })
  })

  it('merges into a head or tag in the store only, with the options the command line has; local ones and bad values are refused (400)', async () => {
    const { dir } = await conflictingHeads()
    const service = await serve({ dir })
    const workspace = readFileSync(join(dir, 'f.txt'), 'utf8')
    const conflict = await post(service.address, 'merge', { from: 'other', into: 'main', message: 'into main' })
    expect(conflict.json()).toMatchObject({ outcome: 'conflict', inProgress: false, ref: 'refs/heads/main' })
    expect(readFileSync(join(dir, 'f.txt'), 'utf8')).toBe(workspace)
    expect((await post(service.address, 'tag', { name: 'old', id: 'other~1' })).status).toBe(200)
    expect((await post(service.address, 'merge', { from: 'other', into: 'old' })).status).toBe(409)
    expect((await post(service.address, 'merge', { from: 'other', into: 'old', force: true })).json()).toMatchObject({ outcome: 'fast-forward', ref: 'refs/tags/old' })
    for (const refused of [
      { from: 'other', allowExternalSymlinks: true },
      { from: 'other', findRenames: 101 },
      { from: 'other', findRenames: false, renames: false },
      { from: 'other', renames: false, findRenames: 60 },
      { from: 'other', density: 0.5 },
      { from: 'other', modelMerge: 'ties', weights: [0, 0] },
      { from: 'other', modelMerge: 'average' },
    ]) {
      const answer = await post(service.address, 'merge', refused)
      expect([answer.status, answer.json()], JSON.stringify(refused)).toMatchObject([400, { error: { code: 'UsageError' } }])
    }
    expect((await post(service.address, 'status')).json()).toMatchObject({ clean: true })
  })

  it('finishes and undoes merges and branch commits stopped on conflicts, and words their next steps as operations', async () => {
    const { dir } = await conflictingHeads()
    const service = await serve({ dir })
    expect((await post(service.address, 'merge', { from: 'other' })).json()).toMatchObject({ outcome: 'conflict', inProgress: true })
    const again = (await post(service.address, 'merge', { from: 'other' })).json() as { error: { message: string } }
    expect(again.error.message).toContain('finish it with merge_continue or undo it with merge_abort')
    expect(again.error.message).not.toContain('forkpoint ')
    const marked = await post(service.address, 'merge_continue')
    expect([marked.status, marked.json()]).toMatchObject([409, { error: { code: 'MergeConflictError', message: expect.stringContaining('merge_abort') } }])
    writeFileSync(join(dir, 'f.txt'), '1\nboth\n3\n')
    expect((await post(service.address, 'merge_continue')).json()).toMatchObject({ outcome: 'merged' })

    const { path } = (await post(service.address, 'branch', { name: 'c1' })).json() as { path: string }
    writeFileSync(join(path, 'f.txt'), '1\nbranch\n3\n')
    writeFileSync(join(dir, 'f.txt'), '1\nparent\n3\n')
    const stopped = await post(service.address, 'commit', { name: 'c1' })
    expect([stopped.status, stopped.json()]).toMatchObject([409, { error: { code: 'ConflictError', data: { inProgress: true } } }])
    expect((stopped.json() as { error: { message: string } }).error.message).toContain('commit_continue {"name":"c1"}, or commit_abort {"name":"c1"}')
    expect((await post(service.address, 'status')).json()).toMatchObject({ commit: { branch: 'c1', conflicts: ['f.txt'] } })
    expect((await post(service.address, 'commit_continue', { name: 'c1' })).status).toBe(409)
    expect((await post(service.address, 'commit_abort', { name: 'c1' })).json()).toMatchObject({ name: 'c1', restored: ['f.txt'] })
    expect(readFileSync(join(dir, 'f.txt'), 'utf8')).toBe('1\nparent\n3\n')
    expect((await post(service.address, 'commit', { name: 'c1' })).status).toBe(409)
    writeFileSync(join(dir, 'f.txt'), 'fixed\n')
    expect((await post(service.address, 'commit_continue', { name: 'c1' })).json()).toMatchObject({ name: 'c1' })
    expect((await post(service.address, 'status')).json()).toMatchObject({ commit: null })
  })
})

describe('the warm workspace: what the watcher reports gives the snapshot a full scan gives', () => {
  const changes: Array<[string, (dir: string) => Promise<void>]> = [
    ['a new file', (d) => fs.writeFile(join(d, 'new.txt'), 'new\n')],
    ['a changed file', (d) => fs.writeFile(join(d, 'a.txt'), 'changed\n')],
    ['a deleted file', (d) => fs.rm(join(d, 'new.txt'))],
    ['a renamed file', (d) => fs.rename(join(d, 'a.txt'), join(d, 'b.txt'))],
    ['a file made executable', (d) => fs.chmod(join(d, 'b.txt'), 0o755)],
    ['a file made plain again', (d) => fs.chmod(join(d, 'b.txt'), 0o644)],
    ['a new directory tree', async (d) => (await fs.mkdir(join(d, 'x/y/z'), { recursive: true }), await fs.writeFile(join(d, 'x/y/z/deep.txt'), 'deep\n'))],
    ['a renamed directory', (d) => fs.rename(join(d, 'x'), join(d, 'w'))],
    ['a deleted directory tree', (d) => fs.rm(join(d, 'w'), { recursive: true })],
    ['a new symlink', (d) => fs.symlink('b.txt', join(d, 'link'))],
    ['a symlink pointed elsewhere', async (d) => (await fs.rm(join(d, 'link')), await fs.symlink('dir/inner.txt', join(d, 'link')))],
    ['a file replaced by a directory', async (d) => (await fs.rm(join(d, 'b.txt')), await fs.mkdir(join(d, 'b.txt')), await fs.writeFile(join(d, 'b.txt/in.txt'), 'in\n'))],
    ['a directory replaced by a file', async (d) => (await fs.rm(join(d, 'dir'), { recursive: true }), await fs.writeFile(join(d, 'dir'), 'now a file\n'))],
    ['a file emptied', (d) => fs.truncate(join(d, 'dir'), 0)],
  ]

  it(`after each of ${changes.length} kinds of change, and after an ignore file changes`, async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n', 'dir/inner.txt': 'inner\n', 'keep.txt': 'keep\n' })
    const service = await serve({ dir, scanInFullUpTo: 0 })
    for (const [what, change] of changes) {
      await change(dir)
      const made = (await post(service.address, 'snapshot', { message: what })).json()
      expect([what, made['tree']]).toEqual([what, await fullScanTree(dir, store)])
      // from the watcher's paths, not a walk; but @parcel/watcher may fail to remove the watch of a moved directory
      // the kernel dropped with it (depending on how its events are batched), and after a watcher error the snapshot scans in full
      if (what !== 'a deleted directory tree') expect([what, made['listedDirs']]).toEqual([what, 0])
    }
    await fs.writeFile(join(dir, '.forkpointignore'), 'keep.txt\n')
    let scan = ''
    for (const until = Date.now() + 30_000; !scan.includes('.forkpointignore') && Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
      scan = (await call(service.address, 'GET', '/v1/health')).json()['scan'] as string
    }
    expect(scan).toMatch(/\.forkpointignore changed/)
    const made = (await post(service.address, 'snapshot')).json()
    expect(made['tree']).toBe(await fullScanTree(dir, store))
  })

  it('after a gc took the tree of the last status (nothing refers to it), by scanning in full', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n', 'dir/inner.txt': 'inner\n' })
    const service = await serve({ dir, scanInFullUpTo: 0 })
    await post(service.address, 'snapshot')
    await fs.writeFile(join(dir, 'dir/inner.txt'), 'only the status saw this\n')
    expect((await post(service.address, 'status')).json()).toMatchObject({ clean: false })
    await fs.writeFile(join(dir, 'dir/inner.txt'), 'inner\n')
    const collected = await gc({ store, prune: 'now' })
    expect(collected.removed.length).toBeGreaterThan(0) // the status's trees and blob
    await fs.writeFile(join(dir, 'a.txt'), 'changed\n')
    const made = (await post(service.address, 'snapshot')).json()
    expect(made).toMatchObject({ tree: await fullScanTree(dir, store) })
  })

  it('refuses a symlink that leaves the workspace at every snapshot, not only the one after it appeared', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const service = await serve({ dir, scanInFullUpTo: 0 })
    await post(service.address, 'snapshot')
    await fs.symlink('/etc/passwd', join(dir, 'out'))
    const refusal = { error: expect.objectContaining({ message: expect.stringMatching(/out/) }) }
    expect((await post(service.address, 'snapshot')).json()).toMatchObject(refusal)
    await fs.writeFile(join(dir, 'a.txt'), 'changed\n')
    expect((await post(service.address, 'snapshot')).json()).toMatchObject(refusal)
    expect((await post(service.address, 'status')).json()).toMatchObject({ changes: expect.arrayContaining([expect.objectContaining({ path: 'out' })]) })
    expect((await post(service.address, 'snapshot')).json()).toMatchObject(refusal)
  })

  it('after the kernel dropped events (an inotify queue overflow), by scanning in full', async () => {
    expect(process.getuid?.()).toBe(0) // the queue's size is a root setting; CI runs as root
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    const limit = '/proc/sys/fs/inotify/max_queued_events'
    const before = readFileSync(limit, 'utf8')
    // a service of its own, whose inotify queue is made while the limit is 32 events
    writeFileSync(limit, '32\n')
    const child = spawn(CLI, ['serve', '--scan-in-full-up-to', '0'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] })
    try {
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
      writeFileSync(limit, before)
      const address = `unix:${join(dir, '.forkpoint', 'service.sock')}`
      await Promise.all(Array.from({ length: 400 }, (_, i) => fs.writeFile(join(dir, `burst-${i}.txt`), `${i}\n`)))
      let health = (await call(address, 'GET', '/v1/health')).json()
      for (const until = Date.now() + 30_000; health['scan'] === 'warm' && Date.now() < until; health = (await call(address, 'GET', '/v1/health')).json())
        await new Promise((r) => setTimeout(r, 20))
      expect(health['scan']).toMatch(/overflow/)
      const made = (await post(address, 'snapshot')).json()
      expect(made['tree']).toBe(await fullScanTree(dir, store))
      expect(made['files']).toBe(401)
    } finally {
      writeFileSync(limit, before)
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
    }
  })
})
