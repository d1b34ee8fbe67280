/**
 * `npm run bench -- ui [--quick]`: the web view (`forkpoint ui`) on a store of 10,000
 * snapshots (a main line with a side image merged back every 20): the graph view's first
 * page (100 images) as JSON from a service that has read nothing yet and from one that has
 * (its snapshot cache warm), and the first view in headless Chromium, from navigation to
 * 100 laid-out nodes on screen, on a cold and on a warm service; then the next page.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { type RunningService, startService, webViewUrl } from '../src/service/httpService.js'
import { launchChromium, openPage } from '../test/ui/browser.js'
import { writeImageHistory } from '../test/ui/uiStore.js'
import { type Row, measure, report } from './harness.js'

/** Images on one page of the graph view (src/ui/ImagesView.tsx). */
const PAGE = 100

/** A side image every this many, merged into the next main one. */
const MERGE_EVERY = 20

/**
 * Navigate an open page to the web view and wait for the graph's first page to be on
 * screen; returns the page's own clock at that moment (ms since its navigation began).
 */
async function firstView(page: Page, url: string): Promise<number> {
  await page.goto(url)
  // a function, not a string: the page's Content-Security-Policy forbids evaluating strings
  const drawn = await page.waitForFunction(
    (n) => (globalThis as unknown as { document: { querySelectorAll(selector: string): { length: number } } }).document.querySelectorAll('g.node').length >= n && performance.now(),
    PAGE,
    { polling: 'raf', timeout: 120_000 },
  )
  return (await drawn.jsonValue()) as number
}

const medianOf = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!

export async function main(args: string[]): Promise<void> {
  const quick = args.includes('--quick')
  const runs = quick ? 3 : 7
  const count = 10_000
  const dir = mkdtempSync(join(tmpdir(), 'fp-bench-ui-'))
  const browser = await launchChromium()
  const running: { service: RunningService | null } = { service: null }
  const address = () => running.service!.address
  const restart = async () => {
    await running.service?.close()
    running.service = await startService({ dir, listen: '127.0.0.1:0', readOnly: true, watch: false })
  }
  const graphUrl = () => `${address()}/v1/view/graph?limit=${PAGE}`
  const getGraph = async () => {
    const answer = (await (await fetch(graphUrl(), { headers: { authorization: `Bearer ${running.service!.token}` } })).json()) as { total: number; nodes: unknown[] }
    if (answer.total !== count || answer.nodes.length !== PAGE) throw new Error(`graph: ${answer.total} images, ${answer.nodes.length} on the page`)
  }
  try {
    const t0 = process.hrtime.bigint()
    await writeImageHistory(dir, count, MERGE_EVERY)
    console.log(`store of ${count} snapshots written in ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(0)} ms`)
    const rows: Row[] = []
    const row = (operation: string, m: { median: number; samples: number[] }) =>
      rows.push({ operation, snapshots: count, 'median ms': m.median, 'min ms': Math.min(...m.samples), 'max ms': Math.max(...m.samples), runs: m.samples.length })
    row('graph view, first page of 100 (JSON), service just started (its cache empty, the OS file cache warm)', await measure(getGraph, { runs, warmup: 0, before: restart }))
    await restart()
    await getGraph()
    row('graph view, first page of 100 (JSON), service warm', await measure(getGraph, { runs, warmup: 1 }))
    // a fresh page before each view (its making is no part of the view); the page's own clock besides the wall clock
    const open: { page: Page | null } = { page: null }
    const inPage: number[] = []
    const freshPage = async () => {
      await open.page?.close()
      open.page = await openPage(browser)
    }
    const view = async () => void inPage.push(await firstView(open.page!, webViewUrl(running.service!)))
    const viewRows = async (service: string, before: () => Promise<unknown>) => {
      inPage.length = 0
      const wall = await measure(view, { runs, warmup: 1, before })
      const own = inPage.slice(1)
      row(`first view in Chromium, navigation to ${PAGE} nodes drawn (wall clock), ${service}`, wall)
      row(`first view in Chromium, navigation to ${PAGE} nodes drawn (the page's clock), ${service}`, { median: medianOf(own), samples: own })
    }
    await viewRows('service just started (its cache empty, the OS file cache warm)', () => Promise.all([freshPage(), restart()]))
    await viewRows('service warm', freshPage)
    const next: number[] = []
    for (let i = 0; i < runs; i++) {
      await freshPage()
      const page = open.page!
      await firstView(page, webViewUrl(running.service!))
      const t = process.hrtime.bigint()
      await page.getByRole('button', { name: 'older' }).click()
      await page.getByText(`images ${PAGE + 1}–${2 * PAGE} of`).waitFor({ timeout: 120_000 })
      await page
        .locator('g.node')
        .nth(PAGE - 1)
        .waitFor({ timeout: 120_000 })
      next.push(Number(process.hrtime.bigint() - t) / 1e6)
    }
    await open.page?.close()
    row(`next page in Chromium: click to the next ${PAGE} nodes drawn, service warm`, { median: medianOf(next), samples: next })
    report('ui', `Web view on a store of ${count} snapshots (a merge every ${MERGE_EVERY}): the graph's first page (median ms)`, rows)
  } finally {
    await browser.close()
    await running.service?.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
