import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, promises as fs } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { allowStoreDirectories, log } from '../../src/index.js'
import { CLI } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'
import { launchChromium, openPage, poll } from './browser.js'
import { type UiStore, makeUiStore } from './uiStore.js'
import type { Browser } from 'playwright-core'

const started: ChildProcess[] = []
afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGTERM')
})

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

/** `forkpoint ui --json` in `dir` (as `nobody` when asked; stopped after the test), and the URL it printed. */
async function startUi(
  dir: string,
  { asNobody = false, env = {} }: { asNobody?: boolean; env?: Record<string, string> } = {},
): Promise<{ url: string; opened: boolean; child: ChildProcess }> {
  const argv = [...(asNobody ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'] : []), CLI, 'ui', '--json']
  const child = spawn(argv[0]!, argv.slice(1), { cwd: dir, env: { PATH: process.env['PATH'], HOME: dir, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  started.push(child)
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const { value: line } = await lines.next()
  const { schemaVersion, url, opened } = JSON.parse(String(line)) as { schemaVersion: number; url: string; opened: boolean }
  expect(schemaVersion).toBe(1)
  return { url, opened, child }
}

/** A request naming the Host it is given, as a page on another name (DNS rebinding) would send it. */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const { hostname, port, pathname } = new URL(url)
    request({ host: hostname, port, path: pathname, headers: { host } }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
      .on('error', reject)
      .end()
  })
}

async function storeOwnedByNobody(): Promise<UiStore> {
  const dir = tempDir('ui-cmd')
  const store = await makeUiStore(dir)
  for (const path of [dir, ...(await fs.readdir(dir, { recursive: true })).map((p) => join(dir, p))]) await fs.lchown(path, 65534, 65534)
  allowStoreDirectories([join(store.dir, '.forkpoint')]) // this test, as root, reads the store nobody owns
  return store
}

describe('forkpoint ui', () => {
  it('serves the web view read-only on 127.0.0.1 at a free port, run by an unprivileged user, and prints its URL', async () => {
    const store = await storeOwnedByNobody()
    const before = await log({ dir: store.dir })
    const { url, opened } = await startUi(store.dir, { asNobody: true })
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ui\/\?token=[\w-]{43}$/)
    expect(opened).toBe(false)

    const page = await openPage(browser)
    await page.goto(url)
    await poll(() => page.locator('g.node').count()).toBe(6)
    expect(page.url()).not.toContain('token') // out of the address bar and the history once read
    await page.reload()
    await poll(() => page.locator('g.node').count()).toBe(6) // the tab keeps it
    await page.close()

    const origin = new URL(url).origin
    const token = new URL(url).searchParams.get('token')!
    expect((await fetch(`${origin}/v1/view/graph`)).status).toBe(401)
    expect((await fetch(`${origin}/v1/view/graph`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    const bearer = { authorization: `Bearer ${token}` }
    expect((await fetch(`${origin}/v1/snapshot`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(401)
    expect((await fetch(`${origin}/v1/snapshot`, { method: 'POST', body: '{}', headers: { ...bearer, 'content-type': 'application/json' } })).status).toBe(405)
    expect((await fetch(`${origin}/v1/snapshot`, { method: 'POST', body: '{}', headers: bearer })).status).toBe(415) // a page's simple POST
    expect(await log({ dir: store.dir })).toEqual(before)
    expect(await getWithHost(url, `rebound.example:${new URL(url).port}`)).toBe(421)
    expect(await getWithHost(url, new URL(url).host)).toBe(200)
  })

  it('opens the URL with xdg-open where there is a display, and only there', async () => {
    const store = await makeUiStore(tempDir('ui-open'))
    const bin = tempDir('ui-bin')
    const opened = join(bin, 'opened')
    await fs.writeFile(join(bin, 'xdg-open'), `#!/bin/sh\necho "$1" > ${opened}\n`, { mode: 0o755 })
    const PATH = `${bin}:${process.env['PATH'] ?? ''}`
    const headless = await startUi(store.dir, { env: { PATH } })
    expect(headless.opened).toBe(false)
    const withDisplay = await startUi(store.dir, { env: { PATH, DISPLAY: ':0' } })
    expect(withDisplay.opened).toBe(true)
    // the opener is given a file of the store's owner alone that leads to the URL: its command line shows no token
    await poll(() => fs.readFile(opened, 'utf8').catch(() => '')).not.toBe('')
    const file = (await fs.readFile(opened, 'utf8')).trim()
    expect(file).toBe(join(store.dir, '.forkpoint', `ui-${new URL(withDisplay.url).port}.html`))
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600)
    expect(await fs.readFile(file, 'utf8')).toContain(`<meta http-equiv="refresh" content="0;url=${withDisplay.url}">`)
    expect(file).not.toContain(new URL(withDisplay.url).searchParams.get('token'))
    for (const child of started.splice(0)) child.kill('SIGTERM')
    await poll(() => existsSync(file)).toBe(false) // gone when the view stops
  })

  it('cleans up after a SIGTERM sent the moment its URL is printed', async () => {
    const store = await makeUiStore(tempDir('ui-stop'))
    const bin = tempDir('ui-stop-bin')
    await fs.writeFile(join(bin, 'xdg-open'), '#!/bin/sh\n', { mode: 0o755 })
    // the process is held right after printing: a listener taken only after the line would come too late
    const hold = { NODE_OPTIONS: `--import=${join(import.meta.dirname, '../helpers/holdFirstLine.mjs')}`, HOLD_FIRST_LINE_MS: '2000' }
    const { url, opened, child } = await startUi(store.dir, { env: { PATH: `${bin}:${process.env['PATH'] ?? ''}`, DISPLAY: ':0', ...hold } })
    expect(opened).toBe(true)
    const exited = new Promise<[number | null, string | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])))
    child.kill('SIGTERM')
    expect(await exited).toEqual([0, null])
    expect(existsSync(join(store.dir, '.forkpoint', `ui-${new URL(url).port}.html`))).toBe(false)
  })
})
