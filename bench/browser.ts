/**
 * `npm run bench -- browser [--runs K]`: browser machines (the `browser` recipe, headless
 * Chromium in the guest) under QEMU (KVM when it works here, TCG otherwise; the
 * accelerator is in every row). A parent is booted, its page given a title, and
 * snapshotted; for N = 1 and 4, the time from `forkMachine` until every child's page
 * answered an eval (the parent's title), against booting N machines cold until every
 * one's Chromium answered an eval; each child's and each cold machine's PSS then. Writes
 * bench/results/browser.json and browser.png (fork against cold boot by N).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Digest, type MachineStats, Store, bootMachine, buildMachineImage, evalInMachine, forkMachine, machineDoctor, machineStats, snapshotMachine } from '../src/index.js'
import { readMachineImage } from '../src/machine/image/MachineImage.js'
import { report, type Row } from './harness.js'
import { type Breakdown, type ForkAgainstCold, averageBreakdown, killAll, median, plotForkAgainstCold, pssRow, smapsBreakdown } from './machine.js'

/** The fetched kernel and Debian packages are kept here between runs, whatever the caller's cache is. */
process.env['XDG_CACHE_HOME'] = '/tmp/forkpoint-bench-kernels'

/** Chromium's renderer and browser processes want more than the library's default 256 MiB. */
const GUEST_MIB = 1536
const NS = [1, 4]
const TITLE = 'forkpoint warm page'

type Live = Set<{ store: Store; id: string }>

export async function main(args: string[]): Promise<void> {
  const runsAt = args.indexOf('--runs')
  const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 1
  const doctor = await machineDoctor()
  const accelerator = doctor.accelerator.toUpperCase()
  console.log(`accelerator ${accelerator} (${doctor.reason}), QEMU ${doctor.qemu}; N = ${NS.join(', ')}, ${runs} run(s) each`)
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-browser-'))
  const live: Live = new Set()
  try {
    const store = await Store.init(join(root, 'store'))
    const t0 = performance.now()
    const { image, kernelRelease } = await buildMachineImage({ recipe: 'browser', store })
    const buildMs = performance.now() - t0
    const { rootfs } = await readMachineImage(store, image)
    const warm = await warmSnapshot(store, image, live)
    const results: ForkAgainstCold[] = []
    for (const n of NS) results.push(await forkAgainstCold(store, image, warm.snapshot, n, runs, live))

    const row = (r: Omit<Row, 'accelerator'>): Row => ({ accelerator, ...r })
    const rows: Row[] = []
    for (const f of results) {
      rows.push(
        row({
          operation: `browser: fork N = ${f.n} from warm until every child's page answered an eval`,
          n: f.n,
          guest_MiB: GUEST_MIB,
          result: Math.round(f.forkMs),
          unit: 'ms',
          compared_with: "cold boot of N browser machines until every one's Chromium answered an eval",
          compared_value: Math.round(f.coldMs),
          ratio: f.coldMs / f.forkMs,
          target: doctor.accelerator === 'tcg' ? '≥ 20x faster (TCG)' : 'report',
          met: doctor.accelerator === 'tcg' ? (f.coldMs / f.forkMs >= 20 ? 'yes' : 'no') : '–',
          note: `medians of ${runs} run(s), fork and cold interleaved; ${(f.forkMs / f.n).toFixed(0)} ms a child against ${(f.coldMs / f.n).toFixed(0)} ms a cold machine`,
        }),
      )
      rows.push({
        ...pssRow(row, f.n, GUEST_MIB, f.forkPss, f.coldPss, f.breakdown),
        operation: `browser: PSS per child after its page answered, N = ${f.n}, ${GUEST_MIB} MiB guest`,
        // reported, not judged: under TCG a child's translated Chromium is most of it (docs/machine.md)
        target: 'report',
        met: '–',
      })
    }
    rows.push(
      row({
        operation: 'browser: parent booted cold until its Chromium answered an eval, then snapshotted',
        n: 1,
        guest_MiB: GUEST_MIB,
        result: Math.round(warm.bootMs),
        unit: 'ms to the first eval',
        compared_with: 'snapshot pause (ms)',
        compared_value: Math.round(warm.snapshot.pausedMs),
        ratio: '–',
        target: 'report',
        met: '–',
        note: `${(warm.snapshot.newBytes / 1e6).toFixed(1)} MB new in the store; image built in ${(buildMs / 1000).toFixed(1)} s (packages cached or not), ${rootfs?.packages.length ?? 0} Debian packages, filesystem ${((rootfs?.diskBytes ?? 0) / 2 ** 20).toFixed(0)} MiB`,
      }),
    )
    const title = `Browser machines: headless Chromium in a QEMU microvm under ${accelerator} (${doctor.reason}), QEMU ${doctor.qemu}, kernel ${kernelRelease}, 1 vCPU a guest on a 2-core host`
    report('browser', title, rows, { accelerator: doctor.accelerator, acceleratorReason: doctor.reason, qemu: doctor.qemu, kernelRelease, runs, fork: results })
    plotForkAgainstCold(results, {
      name: 'browser',
      title: 'Browser machines: fork from warm vs cold boot, until each page answered',
      subtitle: `${accelerator}, QEMU ${doctor.qemu} microvm, headless Chromium, ${GUEST_MIB} MiB guests, 1 vCPU each, 2-core host (log scale)`,
      fork: 'forkMachine(N) + evalInMachine in each (from a warm page)',
      cold: "bootMachine × N + evalInMachine in each (Chromium's cold start)",
    })
  } finally {
    await killAll(live)
    rmSync(root, { recursive: true, force: true })
  }
}

/** The parent: booted cold, its page titled once Chromium answers, snapshotted, killed. */
async function warmSnapshot(store: Store, image: Digest, live: Live) {
  const t0 = performance.now()
  const [parent] = await bootAnswering(store, image, 1, live)
  const bootMs = performance.now() - t0
  await evalInMachine({ store, machine: parent!, js: `document.title = ${JSON.stringify(TITLE)}` })
  const snapshot = await snapshotMachine({ store, machine: parent! })
  await killAll(live)
  console.log(`parent answered ${(bootMs / 1000).toFixed(1)} s after its boot began; snapshot paused ${snapshot.pausedMs.toFixed(0)} ms`)
  return { bootMs, snapshot }
}

/** Boot `n` browser machines at once and wait until every one's Chromium answered an eval. */
async function bootAnswering(store: Store, image: Digest, n: number, live: Live): Promise<string[]> {
  const machines = await Promise.all(Array.from({ length: n }, () => bootMachine({ store, image, memoryMiB: GUEST_MIB })))
  for (const m of machines) live.add({ store, id: m.id })
  const ids = machines.map((m) => m.id)
  await Promise.all(ids.map((machine) => evalInMachine({ store, machine, js: 'document.readyState' })))
  return ids
}

/** N children until each page answered with the parent's title, against N cold boots until each Chromium answered; runs interleaved, PSS of each run's machines. */
async function forkAgainstCold(store: Store, image: Digest, snapshot: { image: Digest }, n: number, runs: number, live: Live): Promise<ForkAgainstCold> {
  const samples = { fork: [] as number[], cold: [] as number[] }
  const pss = { fork: [] as MachineStats[], cold: [] as MachineStats[] }
  let breakdown: Breakdown = {}
  for (let i = 0; i < runs; i++) {
    for (const side of ['fork', 'cold'] as const) {
      const t0 = performance.now()
      if (side === 'fork') {
        const children = await forkMachine({ store, image: snapshot.image, n })
        for (const c of children) live.add({ store, id: c.id })
        const titles = await Promise.all(children.map((c) => evalInMachine({ store, machine: c.id, js: 'document.title' })))
        if (titles.some((t) => t !== TITLE)) throw new Error(`a child's page lost the parent's title: ${JSON.stringify(titles)}`)
      } else await bootAnswering(store, image, n, live)
      samples[side].push(performance.now() - t0)
      const stats = await Promise.all([...live].map((m) => machineStats({ store, machine: m.id })))
      pss[side].push(...stats)
      if (side === 'fork') breakdown = averageBreakdown(stats.map((s) => smapsBreakdown(s.pid)))
      console.log(`N = ${n} ${side}: ${(samples[side].at(-1)! / 1000).toFixed(1)} s`)
      await killAll(live)
    }
  }
  return { n, forkMs: median(samples.fork), coldMs: median(samples.cold), forkPss: pss.fork, coldPss: pss.cold, breakdown }
}
