import { existsSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Recorder, Workspace, initWorkspace, snapshotAgent } from '../../src/index.js'
import { type RunningService, startService, webViewUrl } from '../../src/service/httpService.js'
import { ROOT } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'
import { launchChromium, openPage, poll } from './browser.js'
import { referenceScreenshot, screenshotDistance } from './screenshots.js'
import { HOSTILE_FILE, HOSTILE_OUTPUT, type UiStore, makeUiStore, writeImageHistory } from './uiStore.js'

/** The share of changed blocks two screenshots of one view stay under (their ids, times and fonts differ); see screenshots.ts. */
const SAME_VIEW = 0.05

let browser: Browser
let store: UiStore
let service: RunningService

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'ui', 'app.js'))) throw new Error("the web view is not built: run 'npm run build' before these tests")
  store = await makeUiStore(tempDir('ui'))
  service = await startService({ dir: store.dir, listen: '127.0.0.1:0', readOnly: true, watch: false })
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  await service?.close()
})

/** A fresh page on a view of the web view; `requested` collects every URL it asks for. */
async function open(hash: string, requested: string[] = []): Promise<{ page: Page }> {
  const page = await openPage(browser)
  page.on('request', (request) => requested.push(request.url()))
  await page.goto(webViewUrl(service, `#/${hash}`))
  return { page }
}

const nodeOf = (page: Page, id: string) => page.locator(`[data-testid="graph"] g.node[data-id="${id}"]`)

describe('forkpoint ui in headless Chromium', () => {
  it('draws the image graph with its merge and its fork, and a clicked node shows its layers with sizes and its changes against its parent', async () => {
    const { page } = await open('images')
    await poll(() => page.locator('g.node').count()).toBe(6)
    expect(await page.locator('g.node[data-kind="merge"]').count()).toBe(1)
    expect(await page.locator('g.node[data-kind="fork"]').count()).toBe(2)
    expect(await page.locator('svg path.edge.merge').count()).toBe(1)
    await poll(() => page.getByTestId('graph-count').textContent()).toBe('images 1–6 of 6')
    await poll(() => nodeOf(page, store.images.merge).textContent()).toContain('HEAD')

    await nodeOf(page, store.images.merge).click()
    const layers = page.getByTestId('layers')
    await poll(() => layers.locator('tr[data-layer]').allTextContents()).toHaveLength(3)
    expect(await layers.locator('tr[data-layer]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-layer')))).toEqual(['world', 'trace', 'effects'])
    expect(await layers.locator('tr[data-layer="world"] td').nth(2).textContent()).toBe('4 files, 54 B')
    await poll(() => layers.locator('tr[data-layer="trace"] td').nth(3).textContent()).toContain('same input, different output')
    await poll(() => page.getByTestId('changed-files').textContent()).toBe('modified src/main.js')
    await page.locator('[data-testid="parents"] button[data-parent="1"]').click()
    await poll(() => page.getByTestId('changed-files').textContent()).toBe('added notes.md')
    await page.close()
  })

  it("shows a file named like a script tag and a run's HTML output as text, never as markup", async () => {
    const { page } = await open('images')
    await nodeOf(page, store.images.base).click()
    await page.locator('.tabs button[data-tab="files"]').click()
    await page.getByRole('button', { name: 'src/' }).click()
    await poll(() => page.getByTestId('tree').textContent()).toContain(HOSTILE_FILE)
    await page.locator('.tabs button[data-tab="ledger"]').click()
    await expect
      .poll(async () => (await page.getByTestId('ledger').locator('tbody td').allTextContents()).filter((_, i) => i !== 1))
      .toEqual(['0', 'email.send', 'irreversible', 'executed', 'm-1'])
    await page.locator('.tabs button[data-tab="conversation"]').click()
    await poll(() => page.locator('.step[data-idx="2"] pre.output').textContent()).toBe(JSON.stringify({ html: HOSTILE_OUTPUT }, null, 2))
    expect(await page.locator('main script, main img, main b').count()).toBe(0)
    expect(await page.title()).toBe('forkpoint')
    await poll(() => page.locator('.step[data-idx="1"] pre.value').first().textContent()).toContain('[redacted secret]')
    await page.close()
  })

  it('puts two runs side by side with the divergent step highlighted and its JSON diff', async () => {
    const { page } = await open('runs')
    await page.getByLabel(`A: ${store.runs.a}`).check()
    await page.getByLabel(`B: ${store.runs.b}`).check()
    await poll(() => page.getByTestId('divergence').getAttribute('data-status')).toBe('output_divergence')
    await poll(() => page.locator('.step[data-divergent="true"]').count()).toBe(2)
    for (const column of await page.locator('.columns > div').all()) {
      expect(await column.locator('.step[data-divergent="true"] strong').textContent()).toBe('search')
      expect(await column.locator('.step[data-divergent="true"]').getAttribute('data-idx')).toBe('2')
    }
    const row = page.getByTestId('json-diff').locator('tbody tr')
    expect(await row.count()).toBe(1)
    expect(await row.locator('td').allTextContents()).toEqual(['$.html', 'replace', HOSTILE_OUTPUT, '<i>a different answer</i>'])
    expect(await page.locator('main img, main i').count()).toBe(0)
    await page.close()
  })

  it("lists an exploration's candidates with status, score and time, and marks the winner", async () => {
    const { page } = await open('explorations')
    const exploration = page.getByTestId('exploration')
    await poll(() => exploration.count()).toBe(1)
    expect(await exploration.getAttribute('data-pattern')).toBe('bestOfN')
    expect(await exploration.locator('h3 .status').textContent()).toBe('committed')
    const rows = exploration.locator('tbody tr')
    expect(await rows.count()).toBe(3)
    const cells = async (i: number) => (await rows.nth(i).locator('td').allTextContents()).slice(0, 3)
    expect([await cells(0), await cells(1), await cells(2)]).toEqual([
      ['0', 'succeeded', '0'],
      ['1 ★', 'succeeded', '10'],
      ['2', 'failed', '20'],
    ])
    expect(await exploration.locator('tr[data-winner="true"] td').first().textContent()).toBe('1 ★')
    await page.close()
  })

  it('shows a live branch and the paths it changes while the page is open, and on the graph the image it started from', async () => {
    const { page } = await open('live')
    await poll(() => page.getByTestId('no-branches').count()).toBe(1)
    const ws = await Workspace.open({ dir: store.dir })
    const branch = await ws.branch('attempt')
    try {
      await writeFile(join(branch.path, 'draft.md'), 'first\n')
      const section = page.locator('section.branch[data-branch="attempt"]')
      await poll(() => section.locator('ul.changes').textContent()).toBe('changed draft.md')
      await writeFile(join(branch.path, 'second.md'), 'second\n')
      await poll(() => section.locator('ul.changes li').count()).toBe(2)
      const { page: graph } = await open('images')
      await poll(() => nodeOf(graph, store.images.merge).locator('text.id').textContent()).toContain('live: attempt')
      await graph.close()
    } finally {
      await branch.abort()
    }
    await poll(() => page.getByTestId('no-branches').count()).toBe(1)
    await page.close()
  })

  it('shows the sandboxed commands running in a branch and in the workspace itself while they run, with the workspace changes since HEAD', async () => {
    const { page } = await open('live')
    const ws = await Workspace.open({ dir: store.dir })
    const branch = await ws.branch('busy')
    const stop = new AbortController()
    const inBranch = branch.run('echo made > out.txt; sleep 120', { signal: stop.signal, timeout: 0 }).catch(() => undefined)
    const inWorkspace = ws.run('echo new > loose.txt; sleep 120', { signal: stop.signal, timeout: 0 }).catch(() => undefined)
    try {
      const section = page.locator('section.branch[data-branch="busy"]')
      await poll(() => section.getByTestId('running').textContent()).toContain('echo made > out.txt; sleep 120')
      await poll(() => section.locator('ul.changes').textContent()).toBe('changed out.txt')
      const workspace = page.getByTestId('workspace-sandboxes')
      await poll(() => workspace.getByTestId('running').textContent()).toContain('echo new > loose.txt; sleep 120')
      await poll(() => workspace.locator('ul.changes').textContent()).toContain('loose.txt')
    } finally {
      stop.abort()
      await Promise.all([inBranch, inWorkspace])
      await branch.abort()
      await rm(join(store.dir, 'loose.txt'), { force: true })
    }
    await poll(() => page.getByTestId('workspace-sandboxes').count()).toBe(0)
    await poll(() => page.getByTestId('no-branches').count()).toBe(1)
    await page.close()
  })

  it('looks like its reference screenshots: the graph with a node open, two runs side by side, the explorations', async () => {
    const shots: Record<string, Buffer> = {}
    const graph = await open('images')
    await nodeOf(graph.page, store.images.merge).click()
    await poll(() => graph.page.getByTestId('changed-files').count()).toBe(1)
    shots['graph'] = await graph.page.screenshot()
    const runs = await open('runs')
    await runs.page.getByLabel(`A: ${store.runs.a}`).check()
    await runs.page.getByLabel(`B: ${store.runs.b}`).check()
    await poll(() => runs.page.locator('.step[data-divergent="true"]').count()).toBe(2)
    shots['run-diff'] = await runs.page.screenshot()
    const explorations = await open('explorations')
    await poll(() => explorations.page.getByTestId('exploration').count()).toBe(1)
    shots['explorations'] = await explorations.page.screenshot()
    const references = Object.fromEntries(Object.entries(shots).map(([name, shot]) => [name, referenceScreenshot(name, shot)]))
    for (const [name, shot] of Object.entries(shots)) {
      expect(screenshotDistance(shot, references[name]!), name).toBeLessThan(SAME_VIEW)
      // the comparison tells views apart: each is far from the other views' references
      for (const other of Object.keys(shots).filter((o) => o !== name)) expect(screenshotDistance(shot, references[other]!), `${name} against ${other}`).toBeGreaterThan(SAME_VIEW)
    }
    await Promise.all([graph, runs, explorations].map(({ page }) => page.close()))
  })

  it('asked nothing of any origin but the service, which forbids the page any other by its Content-Security-Policy', async () => {
    const requested: string[] = []
    for (const view of ['images', 'live', 'runs', 'explorations']) {
      const { page } = await open(view, requested)
      await poll(() => page.locator('main .muted, main table, main svg').count()).toBeGreaterThan(0)
      if (view === 'images') {
        await nodeOf(page, store.images.merge).click()
        await poll(() => page.getByTestId('changed-files').count()).toBe(1)
      }
      if (view === 'runs') {
        await page.getByLabel(`A: ${store.runs.a}`).check()
        await poll(() => page.getByTestId('timeline').count()).toBe(1)
      }
      await page.close()
    }
    expect(requested.filter((url) => url.includes('/v1/view/')).length).toBeGreaterThan(5)
    expect(requested.filter((url) => !url.startsWith(`${service.address}/`))).toEqual([])
    // another server on loopback that would answer any origin: only the policy stops the page
    let reached = 0
    const other = createServer((_req, res) => {
      reached++
      res.writeHead(200, { 'access-control-allow-origin': '*' }).end('{}')
    })
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}/`
    const { page: tab } = await open('images')
    try {
      expect(
        await tab.evaluate(
          (target) =>
            fetch(target).then(
              () => 'fetched',
              () => 'blocked',
            ),
          url,
        ),
      ).toBe('blocked')
      expect(reached).toBe(0)
      expect(await fetch(url).then((r) => r.status)).toBe(200)
    } finally {
      other.close()
    }
    const served = await fetch(`${service.address}/ui/`)
    expect(served.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(served.headers.get('content-security-policy')).toContain("connect-src 'self'")
    await tab.close()
  })

  it('pages a long history: the newest images first, the rest a click away, edges to the next page drawn as stubs', async () => {
    const dir = tempDir('ui-long')
    await writeImageHistory(dir, 250, 20)
    const long = await startService({ dir, listen: '127.0.0.1:0', readOnly: true, watch: false })
    try {
      const page = await openPage(browser)
      await page.goto(webViewUrl(long))
      await poll(() => page.getByTestId('graph-count').textContent()).toBe('images 1–100 of 250')
      expect(await page.locator('g.node').count()).toBe(100)
      expect(await page.locator('g.node text.message').first().textContent()).toBe('main 249')
      expect(await page.locator('line.stub').count()).toBeGreaterThan(0)
      await page.getByRole('button', { name: 'older' }).click()
      await page.getByRole('button', { name: 'older' }).click()
      await poll(() => page.getByTestId('graph-count').textContent()).toBe('images 201–250 of 250')
      expect(await page.locator('g.node').count()).toBe(50)
      expect(await page.locator('g.node[data-kind="root"] text.message').textContent()).toBe('root')
      expect(await page.getByRole('button', { name: 'older' }).isDisabled()).toBe(true)
      await page.close()
    } finally {
      await long.close()
    }
  })

  it("shows a long run's first 500 steps and the rest on demand", async () => {
    const dir = tempDir('ui-steps')
    await initWorkspace({ dir })
    const rec = await Recorder.start({ entrypoint: 'long', dir, env: {} })
    for (let i = 0; i < 520; i++) await rec.tool('count', { i }, () => i)
    const done = await rec.finish()
    if (done.kind !== 'recorded') throw new Error('expected a recorded run')
    const steps = await startService({ dir, listen: '127.0.0.1:0', readOnly: true, watch: false })
    try {
      const page = await openPage(browser)
      await page.goto(webViewUrl(steps, '#/runs'))
      await page.getByLabel(`A: ${done.run.runId}`).check()
      await poll(() => page.locator('.timeline .step').count()).toBe(500)
      await page.getByRole('button', { name: '20 more steps (of 20)' }).click()
      await poll(() => page.locator('.timeline .step').count()).toBe(520)
      expect(await page.locator('.timeline .step').last().getAttribute('data-idx')).toBe('519')
      await page.close()
    } finally {
      await steps.close()
    }
  })

  it('draws an image made while the page is open', async () => {
    const dir = tempDir('ui-new')
    await initWorkspace({ dir })
    await snapshotAgent({ dir, message: 'first' })
    const growing = await startService({ dir, listen: '127.0.0.1:0', readOnly: true, watch: false })
    try {
      const page = await openPage(browser)
      await page.goto(webViewUrl(growing))
      await poll(() => page.locator('g.node text.message').allTextContents()).toEqual(['first'])
      await writeFile(join(dir, 'new.txt'), 'new\n')
      await snapshotAgent({ dir, message: 'second' })
      await poll(() => page.locator('g.node text.message').allTextContents()).toEqual(['second', 'first'])
      await page.close()
    } finally {
      await growing.close()
    }
  })
})
