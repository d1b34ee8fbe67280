import { randomBytes } from 'node:crypto'
import { type Server, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium } from 'playwright-core'
import { type MachineInfo, PageScriptError, bootMachine, evalInMachine, forkMachine, killMachine, serveMachineCdp, showObject, snapshotMachine } from '../../src/index.js'
import { runCli } from '../helpers/cli.js'
import { KERNEL_CACHE, MACHINE_TIMEOUT, killAllMachines, machineWorkspace, pollFor } from '../helpers/machines.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

/**
 * The browser recipe: a Debian root filesystem with Chromium, started headless by the
 * guest's init, driven through its DevTools protocol from the host. Pages come from a
 * server on the host's loopback, which a guest with `--net egress --allow` reaches as
 * 10.0.2.2. Chromium takes over a minute to start under TCG on a busy host: every wait on
 * it polls to a deadline of many minutes.
 */
const BROWSER_WAIT_MS = 15 * 60_000
const TEST_TIMEOUT = 4 * BROWSER_WAIT_MS
const env = { XDG_CACHE_HOME: KERNEL_CACHE }

let dir: string
let browser: string
let parent: MachineInfo
let server: Server
let port: number
let unlisted: Server
let unlistedPort: number
let unlistedRequests = 0

const pageUrl = (path: string) => `http://10.0.2.2:${port}${path}`
const net = () => ({ net: 'egress' as const, allow: [`127.0.0.1:${port}`] })

/** Each path a page whose title is the path's name. */
function servePages(): Promise<void> {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'text/html')
    res.end(`<!doctype html><title>page ${req.url?.slice(1)}</title><p>hello`)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => ((port = (server.address() as AddressInfo).port), resolve())))
}

/** A loopback server the machines' egress does not allow: it counts what reaches it. */
function serveUnlisted(): Promise<void> {
  unlisted = createServer((_req, res) => {
    unlistedRequests += 1
    res.end('reached')
  })
  return new Promise((resolve) => unlisted.listen(0, '127.0.0.1', () => ((unlistedPort = (unlisted.address() as AddressInfo).port), resolve())))
}

const evalIn = (machine: string, js: string) => evalInMachine({ dir, machine, js })

/** Navigate a machine's page and wait until the new page is loaded. */
async function navigate(machine: string, path: string): Promise<void> {
  await evalIn(machine, `location.href = ${JSON.stringify(pageUrl(path))}`)
  await pollFor(
    `machine ${machine}'s page at ${path}`,
    async () => ((await evalIn(machine, 'document.readyState === "complete" && location.pathname')) === path ? true : undefined),
    BROWSER_WAIT_MS,
  )
}

beforeAll(async () => {
  await servePages()
  await serveUnlisted()
  dir = await machineWorkspace('machine-browser')
  browser = await sharedMachineImage(dir, 'browser')
  parent = await bootMachine({ dir, image: browser, memoryMiB: 1536, ...net() })
}, TEST_TIMEOUT)

afterAll(async () => {
  if (dir) await killAllMachines(dir)
  await new Promise((resolve) => server?.close(resolve))
  await new Promise((resolve) => unlisted?.close(resolve))
}, MACHINE_TIMEOUT)

describe('the browser recipe', () => {
  it("is a root filesystem holding Debian's chromium and python3 with qemu-guest-agent", { timeout: MACHINE_TIMEOUT }, async () => {
    const shown = await showObject({ dir, id: browser })
    if (!('object' in shown)) throw new Error(`${browser} is not a machine image`)
    const { rootfs, recipe } = shown.object as unknown as { recipe: string; rootfs: { packages: string[] } }
    expect(recipe).toBe('browser')
    expect(rootfs.packages.map((p) => p.split('=')[0])).toEqual(expect.arrayContaining(['chromium', 'python3', 'qemu-guest-agent']))
  })

  it("evaluates in the guest's Chromium a page served by the host, through egress to the host's loopback", { timeout: TEST_TIMEOUT }, async () => {
    await navigate(parent.id, '/a')
    expect(await evalIn(parent.id, 'document.title')).toBe('page a')
    expect(await evalIn(parent.id, '({n: 1 + 1, list: [true, null], nothing: undefined})')).toEqual({ n: 2, list: [true, null] })
    expect(await evalIn(parent.id, 'undefined')).toBeNull()
    expect(await evalIn(parent.id, 'new Promise((resolve) => setTimeout(() => resolve("later"), 10))')).toBe('later')
  })

  it('reaches no host address its egress does not allow', { timeout: TEST_TIMEOUT }, async () => {
    const url = `http://10.0.2.2:${unlistedPort}/`
    const attempt = `fetch(${JSON.stringify(url)}, { mode: 'no-cors', signal: AbortSignal.timeout(20000) }).then(() => 'reached', () => 'failed')`
    expect(await evalIn(parent.id, attempt)).toBe('failed')
    expect(unlistedRequests).toBe(0)
  })

  it('refuses a script that throws with PageScriptError; the CLI prints JSON and exits 1 for it', { timeout: TEST_TIMEOUT }, async () => {
    const thrown = await evalIn(parent.id, 'throw new Error("no such thing")').catch((e: unknown) => e)
    expect(thrown).toBeInstanceOf(PageScriptError)
    expect((thrown as PageScriptError).data.exception).toMatch(/no such thing/)
    const printed = await runCli(['machine', 'eval', parent.id, '[document.title, 6 * 7]'], { cwd: dir, env })
    expect(printed).toMatchObject({ code: 0, stdout: '["page a",42]\n' })
    const failed = await runCli(['machine', 'eval', parent.id, 'null.x', '--json'], { cwd: dir, env })
    expect(failed.code).toBe(1)
    expect(JSON.parse(failed.stderr || failed.stdout)).toMatchObject({ error: { code: 'PageScriptError' } })
  })

  it(
    "forks 3 children of a page with localStorage set: each reads the parent's value, one navigates alone, playwright-core drives another over CDP",
    { timeout: TEST_TIMEOUT },
    async () => {
      const secret = randomBytes(8).toString('hex')
      expect(await evalIn(parent.id, `localStorage.setItem('secret', ${JSON.stringify(secret)}); localStorage.getItem('secret')`)).toBe(secret)
      const snapshot = await snapshotMachine({ dir, machine: parent.id })
      await killMachine({ dir, machine: parent.id }) // three guests at a time on a two-core host is enough
      const children = await forkMachine({ dir, image: snapshot.image, n: 3, ...net() })
      for (const child of children) {
        expect(await evalIn(child.id, 'localStorage.getItem("secret")')).toBe(secret)
        expect(await evalIn(child.id, 'document.title')).toBe('page a')
      }
      const [first, ...others] = children as [MachineInfo, ...MachineInfo[]]
      await navigate(first.id, '/b')
      expect(await evalIn(first.id, '[document.title, localStorage.getItem("secret")]')).toEqual(['page b', secret])
      for (const other of others) expect(await evalIn(other.id, '[document.title, location.pathname]')).toEqual(['page a', '/a'])

      // playwright-core drives a child through the DevTools endpoint on the host's loopback; its siblings do not see it
      const [driven, untouched] = others as [MachineInfo, MachineInfo]
      const endpoint = await serveMachineCdp({ dir, machine: driven.id })
      try {
        expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
        const refused = await fetch(`${endpoint.url}/json/version`)
        expect(refused.status).toBe(401)
        const browser = await chromium.connectOverCDP(endpoint.url, { headers: { authorization: `Bearer ${endpoint.token}` } })
        const page = browser.contexts()[0]!.pages()[0]!
        expect(await page.title()).toBe('page a')
        expect(await page.evaluate('localStorage.getItem("secret")')).toBe(secret)
        await page.evaluate('document.title = "driven by playwright"')
        await browser.close()
      } finally {
        await endpoint.close()
      }
      expect(await evalIn(driven.id, 'document.title')).toBe('driven by playwright')
      expect(await evalIn(untouched.id, 'document.title')).toBe('page a')
    },
  )
})
