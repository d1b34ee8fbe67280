/**
 * `npm run bench -- machine [--quick]`: the machines' benchmark, microVMs under QEMU (KVM
 * when it works here, TCG otherwise; the accelerator is in every row). For N = 1, 4, 16
 * (--quick: 1, 4): the time from `forkMachine` to every child having answered an exec,
 * against booting N machines cold to the same point (each run of one followed by a run
 * of the other); each child's PSS after it ran a command, as a share of the guest's RAM,
 * with where it goes (/proc/PID/smaps); the time and stored size of a first snapshot of
 * 128 MiB, 512 MiB and 1 GiB guests into an empty store, and the PSS of children of the
 * 1 GiB one; what a second snapshot of one machine shares with its first. Writes
 * bench/results/machine.json, machine.csv and machine.png (fork against cold boot by N).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type Digest,
  type MachineStats,
  Store,
  bootMachine,
  buildMachineImage,
  diffMachines,
  execMachine,
  forkMachine,
  killMachine,
  listMachines,
  machineDoctor,
  machineStats,
  snapshotMachine,
} from '../src/index.js'
import { ZERO_PIECE_DIGEST } from '../src/machine/filePieces.js'
import { readMachineImage } from '../src/machine/image/MachineImage.js'
import { readMachineLayer } from '../src/machine/MachineLayer.js'
import { readChunks, readSnapshot } from '../src/world/tree/readObjects.js'
import { report, type Row } from './harness.js'

/** The fetched kernel package is kept here between runs, whatever the caller's cache is. */
process.env['XDG_CACHE_HOME'] = '/tmp/forkpoint-bench-kernels'

const MiB = 1024 * 1024
const MB = 1e6
/** The guests forked and booted in the fork rows: the library's default. */
const FORK_GUEST_MIB = 256
const DISK_MIB = 256
const SNAPSHOT_GUESTS_MIB = [128, 512, 1024]
const results = join(dirname(fileURLToPath(import.meta.url)), 'results')

export async function main(args: string[]): Promise<void> {
  const quick = args.includes('--quick')
  const ns = quick ? [1, 4] : [1, 4, 16]
  const runs = quick ? 2 : 3
  const doctor = await machineDoctor()
  const accelerator = doctor.accelerator.toUpperCase()
  console.log(`accelerator ${accelerator} (${doctor.reason}), QEMU ${doctor.qemu}; N = ${ns.join(', ')}, ${runs} runs each`)
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-machine-'))
  const live = new Set<{ store: Store; id: string }>()
  try {
    const store = await Store.init(join(root, 'store'))
    const { image: base, kernelRelease } = await buildMachineImage({ recipe: 'busybox', store })

    // the parent: booted cold, ran a command, snapshotted (the image children fork from), changed a little, snapshotted again
    const parent = await bootMachine({ store, image: base, memoryMiB: FORK_GUEST_MIB, diskMiB: DISK_MIB })
    live.add({ store, id: parent.id })
    await answer(store, [parent.id])
    const t0 = performance.now()
    const first = await snapshotMachine({ store, machine: parent.id })
    const firstMs = performance.now() - t0
    const wrote = await execMachine({ store, machine: parent.id, command: 'dd if=/dev/urandom of=/tmp/bench-1m bs=1M count=1 2>/dev/null && sync' })
    if (wrote.exitCode !== 0) throw new Error(`writing 1 MB in the guest failed: ${wrote.stderr}`)
    const second = await snapshotMachine({ store, machine: parent.id })
    await killAll(live)

    const rows: Row[] = []
    const row = (r: Omit<Row, 'accelerator'>): Row => ({ accelerator, ...r })
    const fork = await forkRows(store, first.image, base, ns, runs, live)
    for (const f of fork) {
      rows.push(
        row({
          operation: `fork N = ${f.n} from warm, until every child answered an exec`,
          n: f.n,
          guest_MiB: FORK_GUEST_MIB,
          result: Math.round(f.forkMs),
          unit: 'ms',
          compared_with: `cold boot of N to the same point`,
          compared_value: Math.round(f.coldMs),
          ratio: f.coldMs / f.forkMs,
          target: doctor.accelerator === 'tcg' ? '≥ 10x faster (TCG)' : f.n === 16 ? '< 150 ms (KVM)' : '–',
          met: doctor.accelerator === 'tcg' ? yesNo(f.coldMs / f.forkMs >= 10) : f.n === 16 ? yesNo(f.forkMs < 150) : '–',
          note: `medians of ${runs} runs, interleaved; ${(f.forkMs / f.n).toFixed(0)} ms a child against ${(f.coldMs / f.n).toFixed(0)} ms a cold machine; runs given up for a machine that never answered, run again: ${f.lostForks} fork, ${f.lostBoots} cold`,
        }),
      )
    }
    for (const f of fork) rows.push(pssRow(row, f.n, FORK_GUEST_MIB, f.forkPss, f.coldPss, f.breakdown), guestRamRow(row, f.n, FORK_GUEST_MIB, f.breakdown))
    for (const w of await warmPythonRows(join(root, 'store-python'), quick ? [1] : [1, 4], runs, live))
      rows.push(
        row({
          operation: `warm Python (${PYTHON_IMPORTS.length} stdlib modules imported): fork N = ${w.n} from warm until every child's interpreter answered`,
          n: w.n,
          guest_MiB: FORK_GUEST_MIB,
          result: Math.round(w.forkMs),
          unit: 'ms',
          compared_with: 'cold boot of N python machines, then the interpreter started and imports done, until it answered',
          compared_value: Math.round(w.coldMs),
          ratio: w.coldMs / w.forkMs,
          target: 'report',
          met: '–',
          note: `medians of ${runs} runs, interleaved; python image ${w.imageMiB} MiB filesystem, ${w.packages} Debian packages; the interpreter answers through a FIFO`,
        }),
      )

    for (const mib of SNAPSHOT_GUESTS_MIB) {
      const s = await snapshotRows(join(root, `store-${mib}`), mib, live)
      rows.push(
        row({
          operation: `first snapshot of a ${mib} MiB guest (booted cold, ran a command) into an empty store`,
          n: 1,
          guest_MiB: mib,
          result: Math.round(s.snapshot.pausedMs),
          unit: 'ms paused',
          compared_with: 'the whole call (ms)',
          compared_value: Math.round(s.ms),
          ratio: '–',
          target: 'report',
          met: '–',
          note: snapshotNote(s.snapshot),
        }),
      )
      for (const f of s.forks) rows.push(pssRow(row, f.n, mib, f.pss, [], f.breakdown))
    }
    rows.push(
      row({
        operation: `first snapshot of the ${FORK_GUEST_MIB} MiB parent the children fork from (store held only the image)`,
        n: 1,
        guest_MiB: FORK_GUEST_MIB,
        result: Math.round(first.pausedMs),
        unit: 'ms paused',
        compared_with: 'the whole call (ms)',
        compared_value: Math.round(firstMs),
        ratio: '–',
        target: 'report',
        met: '–',
        note: snapshotNote(first),
      }),
    )
    const shared = await sharedBytes(store, first.image, second.image)
    const diff = await diffMachines({ store, a: first.image, b: second.image })
    rows.push(
      row({
        operation: `second snapshot of the ${FORK_GUEST_MIB} MiB parent after writing 1 MB to /tmp`,
        n: 1,
        guest_MiB: FORK_GUEST_MIB,
        result: second.newBytes,
        unit: 'new bytes stored',
        compared_with: 'its distinct non-zero bytes (RAM + disk pieces)',
        compared_value: shared.nonZero,
        ratio: shared.shared / shared.nonZero,
        target: 'report',
        met: '–',
        note:
          `${pct(shared.shared, shared.nonZero)} of its non-zero bytes (${mb(shared.shared)} of ${mb(shared.nonZero)}) are pieces the first snapshot holds; ` +
          `${mb(second.newBytes)} new (${pct(second.newBytes, first.newBytes)} of the first snapshot's ${mb(first.newBytes)}); ` +
          `${diff.memory.changed} of ${diff.memory.pages} RAM pages and ${diff.disk.changed} of ${diff.disk.blocks} disk blocks changed; paused ${Math.round(second.pausedMs)} ms`,
      }),
    )

    const title = `Machines: QEMU microvm under ${accelerator} (${doctor.reason}), QEMU ${doctor.qemu}, kernel ${kernelRelease}, 1 vCPU a guest on a 2-core host`
    report('machine', title, rows, { quick, accelerator: doctor.accelerator, acceleratorReason: doctor.reason, qemu: doctor.qemu, kernelRelease, fork })
    writeCsv(join(results, 'machine.csv'), rows)
    plotForkAgainstCold(fork, {
      name: 'machine',
      title: 'Fork from warm vs cold boot, until every machine answered an exec',
      subtitle: `${accelerator}, QEMU ${doctor.qemu} microvm, ${FORK_GUEST_MIB} MiB guests, 1 vCPU each, 2-core host (medians; log scale)`,
      fork: 'forkMachine(N) + exec in each (from a warm snapshot)',
      cold: 'bootMachine × N + exec in each (cold boot)',
    })
  } finally {
    await killAll(live)
    rmSync(root, { recursive: true, force: true })
  }
}

/** One N's children from warm against as many cold boots: median times, memory of each, TCG's share. */
export interface ForkAgainstCold {
  n: number
  forkMs: number
  coldMs: number
  forkPss: MachineStats[]
  coldPss: MachineStats[]
  breakdown: Breakdown
}

interface ForkResult extends ForkAgainstCold {
  lostForks: number
  lostBoots: number
}

/**
 * For each N: fork N children of the snapshot and exec `true` in every one, against
 * booting N machines cold and exec'ing `true` in every one, interleaved as harness
 * `compare` does (fork, cold, fork, cold...), with no warm-up run of each N (one fork
 * before all of them warms Node and the snapshot's files). Each run's machines are
 * measured (PSS) and killed before the next run. A run with a machine that never answers
 * (`execMachine` and `forkMachine` have no deadline; it happens here, see the report) is
 * given up at its deadline, its machines killed, and run again; the rows count them.
 */
async function forkRows(store: Store, image: Digest, base: Digest, ns: number[], runs: number, live: Set<{ store: Store; id: string }>): Promise<ForkResult[]> {
  const warm = await forkMachine({ store, image, n: 1 })
  for (const m of warm) live.add({ store, id: m.id })
  await answer(
    store,
    warm.map((m) => m.id),
  )
  await killAll(live)
  const out: ForkResult[] = []
  for (const n of ns) {
    const forkPss: MachineStats[] = []
    const coldPss: MachineStats[] = []
    let breakdown: Breakdown = {}
    const started = async (machines: Promise<{ id: string }>[]) => {
      const settled = await Promise.allSettled(machines)
      for (const s of settled) if (s.status === 'fulfilled') live.add({ store, id: s.value.id })
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
      if (failed) throw failed.reason
      return settled.map((s) => (s as PromiseFulfilledResult<{ id: string }>).value.id)
    }
    const sides = [
      {
        name: 'fork',
        deadlineMs: 30_000 + 5_000 * n,
        stats: forkPss,
        samples: [] as number[],
        lost: 0,
        run: async () => answer(store, await started((await forkMachine({ store, image, n })).map(async (c) => c))),
      },
      {
        name: 'cold',
        deadlineMs: 60_000 + 15_000 * n,
        stats: coldPss,
        samples: [] as number[],
        lost: 0,
        run: async () => answer(store, await started(Array.from({ length: n }, () => bootMachine({ store, image: base, memoryMiB: FORK_GUEST_MIB, diskMiB: DISK_MIB })))),
      },
    ]
    console.log(`N = ${n}: fork from warm against cold boot, ${runs} runs each`)
    for (let i = 0; i < runs; i++) {
      for (const side of sides) {
        for (;;) {
          const t0 = process.hrtime.bigint()
          try {
            await within(side.deadlineMs, `${side.name} N = ${n}`, side.run())
          } catch (err) {
            if (!(err instanceof Deadline) || side.lost >= 3) throw err
            side.lost++
            console.log(`  ${err.message}: its machines killed, run again`)
            await killStore(store, live)
            continue
          }
          side.samples.push(Number(process.hrtime.bigint() - t0) / 1e6)
          break
        }
        const machines = [...live]
        side.stats.push(...(await Promise.all(machines.map((m) => machineStats({ store, machine: m.id })))))
        if (side.name === 'fork') breakdown = averageBreakdown(side.stats.slice(-machines.length).map((s) => smapsBreakdown(s.pid)))
        await killAll(live)
      }
    }
    const [forkMs, coldMs] = sides.map((s) => median(s.samples)) as [number, number]
    console.log(`  fork ${forkMs.toFixed(0)} ms, cold ${coldMs.toFixed(0)} ms`)
    out.push({ n, forkMs, coldMs, forkPss, coldPss, breakdown, lostForks: sides[0]!.lost, lostBoots: sides[1]!.lost })
  }
  return out
}

class Deadline extends Error {}

/** `promise`, or a Deadline error after `ms` (the promise is left to settle unheard). */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined)
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Deadline(`${what}: a machine did not answer within ${ms / 1000} s`)), ms))),
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** Every machine of the store, those a run left behind before it returned their ids too. */
async function killStore(store: Store, live: Set<{ store: Store; id: string }>): Promise<void> {
  for (const m of await listMachines({ store })) live.add({ store, id: m.id })
  await killAll(live)
}

/** Boot a guest of `mib` cold into a store of its own, exec, snapshot it; for the 1 GiB one, fork children of it and measure them too. */
async function snapshotRows(dir: string, mib: number, live: Set<{ store: Store; id: string }>) {
  const store = await Store.init(dir)
  const { image } = await buildMachineImage({ recipe: 'busybox', store })
  console.log(`snapshot of a ${mib} MiB guest`)
  const machine = await bootMachine({ store, image, memoryMiB: mib, diskMiB: DISK_MIB })
  live.add({ store, id: machine.id })
  await answer(store, [machine.id])
  const t0 = performance.now()
  const snapshot = await snapshotMachine({ store, machine: machine.id })
  const ms = performance.now() - t0
  await killAll(live)
  const forks: Array<{ n: number; pss: MachineStats[]; breakdown: Breakdown }> = []
  if (mib >= 1024) {
    for (const n of [1, 4]) {
      let children: Array<{ id: string }>
      for (let lost = 0; ; lost++) {
        try {
          children = await within(120_000, `fork of the ${mib} MiB guest, N = ${n}`, forkMachine({ store, image: snapshot.image, n }))
          for (const c of children) live.add({ store, id: c.id })
          await within(
            120_000,
            `exec in the children of the ${mib} MiB guest`,
            answer(
              store,
              children.map((c) => c.id),
            ),
          )
          break
        } catch (err) {
          if (!(err instanceof Deadline) || lost >= 3) throw err
          console.log(`  ${err.message}: its machines killed, run again`)
          await killStore(store, live)
        }
      }
      const pss = await Promise.all(children.map((c) => machineStats({ store, machine: c.id })))
      forks.push({ n, pss, breakdown: averageBreakdown(pss.map((s) => smapsBreakdown(s.pid))) })
      await killAll(live)
    }
  }
  return { snapshot, ms, forks }
}

/** What the warm interpreter of the python rows has imported before it answers: a service's worth of the standard library. */
const PYTHON_IMPORTS = [
  'asyncio',
  'json',
  'sqlite3',
  'decimal',
  'email.mime.multipart',
  'http.server',
  'xml.etree.ElementTree',
  'argparse',
  'logging',
  'unittest',
  'urllib.request',
  'ssl',
]

/** Start the warm interpreter in the background: imports, then an answer (its module count) per request on /tmp/req, written to /tmp/resp. */
const START_PYTHON = `mkfifo /tmp/req /tmp/resp && printf '%s\\n' 'import sys, ${PYTHON_IMPORTS.join(', ')}' 'while True:' '    open("/tmp/req").read()' '    open("/tmp/resp", "w").write(str(len(sys.modules)))' > /tmp/warm.py && (setsid python3 /tmp/warm.py </dev/null >/dev/null 2>&1 &)`

/** Ask the warm interpreter once: the write waits until it reads, the read until it answers. */
const ASK_PYTHON = 'echo ping > /tmp/req && cat /tmp/resp'

/**
 * Issue 15's case for forking at all: an interpreter that took seconds to import its
 * modules. A python machine runs one warm interpreter and is snapshotted; then, for each
 * N, forking N children until every child's interpreter answered, against booting N
 * python machines cold and starting the interpreter in each until it answered.
 */
async function warmPythonRows(dir: string, ns: number[], runs: number, live: Set<{ store: Store; id: string }>) {
  const store = await Store.init(dir)
  const { image } = await buildMachineImage({ recipe: 'python', store })
  const { rootfs } = await readMachineImage(store, image)
  if (!rootfs) throw new Error('the python recipe built an image without a root filesystem')
  // the interpreter's answer is its module count
  const ask = (ids: string[], command: string) => answer(store, ids, command, /^\d+$/)
  const booted = async (n: number) => {
    const machines = await Promise.all(Array.from({ length: n }, () => bootMachine({ store, image, memoryMiB: FORK_GUEST_MIB })))
    for (const m of machines) live.add({ store, id: m.id })
    return machines.map((m) => m.id)
  }
  const [parent] = await booted(1)
  await ask([parent!], `${START_PYTHON} && ${ASK_PYTHON}`)
  const snap = await snapshotMachine({ store, machine: parent! })
  await killAll(live)
  const out: Array<{ n: number; forkMs: number; coldMs: number; imageMiB: number; packages: number }> = []
  for (const n of ns) {
    const samples = { fork: [] as number[], cold: [] as number[] }
    for (let i = 0; i < runs; i++) {
      for (const side of ['fork', 'cold'] as const) {
        const t0 = performance.now()
        const run = async () => {
          if (side === 'cold') return ask(await booted(n), `${START_PYTHON} && ${ASK_PYTHON}`)
          const kids = await forkMachine({ store, image: snap.image, n })
          for (const k of kids) live.add({ store, id: k.id })
          return ask(
            kids.map((k) => k.id),
            ASK_PYTHON,
          )
        }
        await within(120_000 + 30_000 * n, `python ${side} N = ${n}`, run())
        samples[side].push(performance.now() - t0)
        await killAll(live)
      }
    }
    console.log(`warm python N = ${n}: fork ${median(samples.fork).toFixed(0)} ms, cold ${median(samples.cold).toFixed(0)} ms`)
    out.push({ n, forkMs: median(samples.fork), coldMs: median(samples.cold), imageMiB: Math.round(rootfs.diskBytes / MiB), packages: rootfs.packages.length })
  }
  return out
}

/** Exec `command` in every machine at once; each must answer 0, its output matching `stdout`. */
async function answer(store: Store, ids: string[], command = 'true', stdout = /^$/): Promise<void> {
  const answers = await Promise.all(ids.map((machine) => execMachine({ store, machine, command })))
  const bad = answers.find((a) => a.exitCode !== 0 || !stdout.test(a.stdout))
  if (bad) throw new Error(`a machine answered ${bad.exitCode}: ${bad.stdout} ${bad.stderr}`)
}

export async function killAll(live: Set<{ store: Store; id: string }>): Promise<void> {
  const machines = [...live]
  live.clear()
  await Promise.all(machines.map((m) => killMachine({ store: m.store, machine: m.id }).catch(() => undefined)))
}

export function pssRow(row: (r: Omit<Row, 'accelerator'>) => Row, n: number, mib: number, pss: MachineStats[], cold: MachineStats[], breakdown: Breakdown): Row {
  const perChild = median(pss.map((s) => s.pssBytes))
  const share = perChild / (mib * MiB)
  return row({
    operation: `PSS per child after it ran a command, N = ${n} children of a ${mib} MiB guest`,
    n,
    guest_MiB: mib,
    result: Number((perChild / MB).toFixed(1)),
    unit: 'MB',
    compared_with: cold.length ? 'PSS of a cold-booted machine at the same point (MB)' : 'guest RAM (MB)',
    compared_value: Number(((cold.length ? median(cold.map((s) => s.pssBytes)) : mib * MiB) / MB).toFixed(1)),
    ratio: share,
    target: '≤ 10% of guest RAM',
    met: yesNo(share <= 0.1),
    note:
      `${(100 * share).toFixed(1)}% of ${mib} MiB; median of ${pss.length} children; RSS ${mb(median(pss.map((s) => s.rssBytes)))}, private dirty ${mb(median(pss.map((s) => s.privateDirtyBytes)))}; ` +
      `PSS by mapping: ${Object.entries(breakdown)
        .sort(([, a], [, b]) => b.pss - a.pss)
        .map(([k, v]) => `${k} ${mb(v.pss)} (${mb(v.privateDirty)} private dirty)`)
        .join(', ')}`,
  })
}

/**
 * The proposed target (docs/machine.md): the guest RAM's part of a child's PSS, what
 * forking shares, against the guest's RAM. QEMU's own memory under TCG (about 29 MiB a
 * child, 12 of them translated code) is more than 10% of a 256 MiB guest whatever forking does.
 */
function guestRamRow(row: (r: Omit<Row, 'accelerator'>) => Row, n: number, mib: number, breakdown: Breakdown): Row {
  const ram = breakdown['guest RAM']?.pss ?? 0
  const rest = Object.entries(breakdown).reduce((sum, [k, v]) => sum + (k === 'guest RAM' ? 0 : v.pss), 0)
  return row({
    operation: `guest RAM's part of the PSS per child, N = ${n} children of a ${mib} MiB guest (proposed target)`,
    n,
    guest_MiB: mib,
    result: Number((ram / MB).toFixed(1)),
    unit: 'MB',
    compared_with: 'guest RAM (MB)',
    compared_value: Number(((mib * MiB) / MB).toFixed(1)),
    ratio: ram / (mib * MiB),
    target: n >= 4 ? '≤ 10% of guest RAM at N ≥ 4 (proposed)' : 'report',
    met: n >= 4 ? yesNo(ram <= 0.1 * mib * MiB) : '–',
    note: `${pct(ram, mib * MiB)} of ${mib} MiB (copied-on-write pages ${mb(breakdown['guest RAM']?.privateDirty ?? 0)}); QEMU's own memory beside it: ${mb(rest)} a child`,
  })
}

function snapshotNote(s: { newBytes: number; memoryBytes: number; diskBytes: number; devicesBytes: number }): string {
  return `${mb(s.newBytes)} new bytes stored (RAM file ${mb(s.memoryBytes)}, disk ${mb(s.diskBytes)}, both sparse: zero 64 KiB pieces are one object); device state ${(s.devicesBytes / 1e3).toFixed(0)} KB`
}

/** What two snapshot images' RAM and disk have in common, by 64 KiB piece: the second's distinct non-zero pieces (what storing it alone would cost) and those of them the first holds too. */
async function sharedBytes(store: Store, a: Digest, b: Digest): Promise<{ nonZero: number; shared: number }> {
  const pieces = async (image: Digest) => {
    const layer = await readMachineLayer(store, (await readSnapshot(store, image)).machine!)
    return [...(await readChunks(store, layer.memory)).chunks, ...(await readChunks(store, layer.disk)).chunks]
  }
  const held = new Set((await pieces(a)).map((p) => p.blob))
  const distinct = new Map((await pieces(b)).filter((p) => p.blob !== ZERO_PIECE_DIGEST).map((p) => [p.blob, p.size]))
  let [nonZero, shared] = [0, 0]
  for (const [blob, size] of distinct) {
    nonZero += size
    if (held.has(blob)) shared += size
  }
  return { nonZero, shared }
}

export type Breakdown = Record<string, { pss: number; privateDirty: number }>

/** A QEMU's memory by kind of mapping, from /proc/PID/smaps: the guest's RAM file, TCG's translated code (anonymous, executable), the heap, other anonymous memory, QEMU's binary and libraries. */
export function smapsBreakdown(pid: number): Breakdown {
  const out: Breakdown = {}
  let kind = 'other'
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ (\S{4}) \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (header) {
      const [perms, path] = [header[1]!, header[2]!]
      kind = /\/ram( \(deleted\))?$/.test(path)
        ? 'guest RAM'
        : path === '' && perms.includes('x')
          ? 'TCG translated code'
          : path === '[heap]'
            ? 'heap'
            : path === '' || path.startsWith('[')
              ? 'other anonymous'
              : 'binaries and libraries'
      out[kind] ??= { pss: 0, privateDirty: 0 }
      continue
    }
    const field = /^(Pss|Private_Dirty):\s+(\d+) kB/.exec(line)
    if (field) out[kind]![field[1] === 'Pss' ? 'pss' : 'privateDirty'] += Number(field[2]) * 1024
  }
  return out
}

export function averageBreakdown(all: Breakdown[]): Breakdown {
  const out: Breakdown = {}
  for (const b of all)
    for (const [k, v] of Object.entries(b)) {
      out[k] ??= { pss: 0, privateDirty: 0 }
      out[k].pss += v.pss / all.length
      out[k].privateDirty += v.privateDirty / all.length
    }
  return out
}

function writeCsv(path: string, rows: Row[]): void {
  const columns = Object.keys(rows[0] ?? {})
  const cell = (v: string | number | undefined) => {
    const s = v === undefined ? '' : String(v)
    return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
  }
  writeFileSync(path, [columns.join(','), ...rows.map((r) => columns.map((c) => cell(r[c])).join(','))].join('\n') + '\n')
  console.log(`wrote ${path}`)
}

/** What a plot of fork against cold boot says: its file's name under bench/results/, its title and subtitle, and its legend's two lines. */
export interface ForkPlot {
  name: string
  title: string
  subtitle: string
  fork: string
  cold: string
}

/** Fork from warm against cold boot by N, as bars on a log scale: an SVG made here, rendered to PNG by rsvg-convert (librsvg2-bin). */
export function plotForkAgainstCold(points: Array<{ n: number; forkMs: number; coldMs: number }>, what: ForkPlot): void {
  const [width, height] = [720, 440]
  const [left, right, top, bottom] = [78, 24, 64, 92]
  const seconds = points.flatMap((p) => [p.forkMs, p.coldMs]).map((ms) => ms / 1000)
  const [lo, hi] = [Math.floor(Math.log10(Math.min(...seconds) * 0.8)), Math.ceil(Math.log10(Math.max(...seconds) * 1.5))]
  const y = (s: number) => top + (height - top - bottom) * (1 - (Math.log10(s) - lo) / (hi - lo))
  const group = (width - left - right) / points.length
  const bar = Math.min(64, group / 3)
  const colors = { fork: '#2b6cb0', cold: '#c05621' }
  const text = (x: number, yy: number, s: string, extra = '') => `<text x="${x.toFixed(1)}" y="${yy.toFixed(1)}" ${extra}>${s}</text>`
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="DejaVu Sans, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    text(width / 2, 24, what.title, 'text-anchor="middle" font-size="15" font-weight="bold"'),
    text(width / 2, 44, what.subtitle, 'text-anchor="middle" fill="#444"'),
  ]
  for (let e = lo; e <= hi; e++) {
    const s = 10 ** e
    parts.push(`<line x1="${left}" x2="${width - right}" y1="${y(s).toFixed(1)}" y2="${y(s).toFixed(1)}" stroke="#ddd"/>`)
    parts.push(text(left - 8, y(s) + 4, s >= 1 ? `${s} s` : `${s * 1000} ms`, 'text-anchor="end" fill="#444"'))
  }
  parts.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${height - bottom}" stroke="#888"/>`)
  points.forEach((p, i) => {
    const center = left + group * (i + 0.5)
    for (const [k, ms] of [
      ['fork', p.forkMs],
      ['cold', p.coldMs],
    ] as const) {
      const x = k === 'fork' ? center - bar - 2 : center + 2
      const s = ms / 1000
      parts.push(`<rect x="${x.toFixed(1)}" y="${y(s).toFixed(1)}" width="${bar.toFixed(1)}" height="${(height - bottom - y(s)).toFixed(1)}" fill="${colors[k]}"/>`)
      parts.push(text(x + bar / 2, y(s) - 5, s >= 10 ? `${s.toFixed(1)} s` : `${s.toFixed(2)} s`, 'text-anchor="middle"'))
    }
    parts.push(text(center, height - bottom + 20, `N = ${p.n}`, 'text-anchor="middle" font-weight="bold"'))
    parts.push(text(center, height - bottom + 38, `fork ${(p.coldMs / p.forkMs).toFixed(1)}x faster`, 'text-anchor="middle" fill="#444"'))
  })
  parts.push(`<line x1="${left}" x2="${width - right}" y1="${height - bottom}" y2="${height - bottom}" stroke="#888"/>`)
  const legend = [
    ['fork', what.fork],
    ['cold', what.cold],
  ] as const
  legend.forEach(([k, label], i) => {
    const ly = height - 30 + i * 18
    const lx = left
    parts.push(`<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${colors[k]}"/>`, text(lx + 18, ly, label))
  })
  parts.push('</svg>')
  const svg = join(results, `${what.name}.svg`)
  writeFileSync(svg, parts.join('\n') + '\n')
  execFileSync('rsvg-convert', ['-o', join(results, `${what.name}.png`), svg])
  console.log(`wrote ${join(results, `${what.name}.png`)}`)
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`
const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)}%`
const yesNo = (ok: boolean) => (ok ? 'yes' : 'no')
