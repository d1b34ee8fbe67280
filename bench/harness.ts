import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** CPU milliseconds used so far by this process and its reaped children (/proc/self/stat utime..cstime): what a busy machine's waiting does not add to. */
export function cpuMs(): number {
  return statCpuMs('self', [11, 12, 13, 14])
}

/** CPU milliseconds a running process `pid` has used so far (utime and stime): a service's, which no wait reaps. */
export function processCpuMs(pid: number): number {
  return statCpuMs(String(pid), [11, 12])
}

function statCpuMs(pid: string, columns: number[]): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  const ticks = columns.reduce((sum, i) => sum + Number(fields[i]), 0)
  return (ticks * 1000) / 100
}

/** Median of `runs` timings of `fn` in milliseconds (after `warmup` unmeasured runs), and the median CPU time of the same runs. */
export async function measure(
  fn: () => unknown,
  { runs = 5, warmup = 1, before }: { runs?: number; warmup?: number; before?: () => unknown } = {},
): Promise<{ median: number; samples: number[]; cpu: number }> {
  const samples: number[] = []
  const cpus: number[] = []
  for (let i = 0; i < warmup + runs; i++) {
    if (before) await before()
    const c0 = cpuMs()
    const t0 = process.hrtime.bigint()
    await fn()
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    if (i >= warmup) {
      samples.push(ms)
      cpus.push(cpuMs() - c0)
    }
  }
  return { median: median(samples), samples, cpu: median(cpus) }
}

type Step = () => unknown

/**
 * `measure` of two operations with their runs interleaved (a, b, a, b, ...), so that a
 * machine whose speed drifts (other load, the disk writing back) weighs on both alike:
 * the ratio of the medians is what the targets speak of. `fastest`: each side's quickest run.
 */
export async function compare(
  a: { run: Step; before?: Step },
  b: { run: Step; before?: Step },
  { runs = 5, warmup = 1 }: { runs?: number; warmup?: number } = {},
): Promise<{ a: number; b: number; ratio: number; fastest: { a: number; b: number } }> {
  const samples: [number[], number[]] = [[], []]
  for (let i = 0; i < warmup + runs; i++) {
    for (const [k, side] of [a, b].entries()) {
      if (side.before) await side.before()
      const t0 = process.hrtime.bigint()
      await side.run()
      if (i >= warmup) samples[k]!.push(Number(process.hrtime.bigint() - t0) / 1e6)
    }
  }
  const [ma, mb] = samples.map(median) as [number, number]
  return { a: ma, b: mb, ratio: ma / mb, fastest: { a: Math.min(...samples[0]), b: Math.min(...samples[1]) } }
}

/**
 * `measure` of several operations with their runs interleaved (each round runs every one once,
 * in order), so that a machine whose load drifts weighs on all alike: the medians of wall and
 * CPU time of each, by name. For rows that compare against a floor measured in the same rounds.
 */
export async function interleave(
  steps: Record<string, { run: Step; before?: Step }>,
  { runs = 5, warmup = 1 }: { runs?: number; warmup?: number } = {},
): Promise<Record<string, { median: number; cpu: number }>> {
  const samples = Object.fromEntries(Object.keys(steps).map((name) => [name, { wall: [] as number[], cpu: [] as number[] }]))
  for (let i = 0; i < warmup + runs; i++) {
    for (const [name, step] of Object.entries(steps)) {
      if (step.before) await step.before()
      const c0 = cpuMs()
      const t0 = process.hrtime.bigint()
      await step.run()
      if (i < warmup) continue
      samples[name]!.wall.push(Number(process.hrtime.bigint() - t0) / 1e6)
      samples[name]!.cpu.push(cpuMs() - c0)
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, { median: median(s.wall), cpu: median(s.cpu) }]))
}

export function median(samples: number[]): number {
  const sorted = [...samples].sort((x, y) => x - y)
  return sorted[Math.floor(sorted.length / 2)]!
}

export interface Row {
  [column: string]: string | number
}

/** The one-minute load average when the benchmark began (this module loads with it). */
const loadAtStart = loadavg()[0]!

/**
 * Print rows as a Markdown table (pasteable into the README) and save them as JSON, with
 * the load average before and after the run, and whether Node started with
 * NODE_EXTRA_CA_CERTS (a Node started with it parses the whole CA bundle first, which
 * every CLI row pays).
 */
export function report(name: string, title: string, rows: Row[], extra: Record<string, unknown> = {}): void {
  const columns = Object.keys(rows[0] ?? {})
  const fmt = (v: string | number) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : v)
  const load = `load average ${loadAtStart.toFixed(2)} -> ${loadavg()[0]!.toFixed(2)}`
  const lines = [`| ${columns.join(' | ')} |`, `| ${columns.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${columns.map((c) => fmt(r[c] ?? '')).join(' | ')} |`)]
  console.log(`\n${title} (${load})\n\n${lines.join('\n')}\n`)
  const out = join(dirname(fileURLToPath(import.meta.url)), 'results', `${name}.json`)
  mkdirSync(dirname(out), { recursive: true })
  const nodeExtraCaCerts = process.env['NODE_EXTRA_CA_CERTS'] ? 'set' : 'unset'
  console.log(`NODE_EXTRA_CA_CERTS ${nodeExtraCaCerts}`)
  writeFileSync(out, `${JSON.stringify({ name, title, date: new Date().toISOString(), node: process.version, load, nodeExtraCaCerts, rows, ...extra }, null, 2)}\n`)
  console.log(`wrote ${out}`)
}
