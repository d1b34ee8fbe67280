import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Median of `runs` timings of `fn` in milliseconds (after `warmup` unmeasured runs). */
export async function measure(fn: () => Promise<unknown> | unknown, { runs = 5, warmup = 1, before }: { runs?: number; warmup?: number; before?: () => Promise<unknown> | unknown } = {}): Promise<{ median: number; samples: number[] }> {
  const samples: number[] = []
  for (let i = 0; i < warmup + runs; i++) {
    if (before) await before()
    const t0 = process.hrtime.bigint()
    await fn()
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    if (i >= warmup) samples.push(ms)
  }
  const sorted = [...samples].sort((a, b) => a - b)
  return { median: sorted[Math.floor(sorted.length / 2)]!, samples }
}

export interface Row {
  [column: string]: string | number
}

/** Print rows as a Markdown table (pasteable into the README) and save them as JSON. */
export function report(name: string, title: string, rows: Row[], extra: Record<string, unknown> = {}): void {
  const columns = Object.keys(rows[0] ?? {})
  const fmt = (v: string | number) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : v)
  const lines = [
    `| ${columns.join(' | ')} |`,
    `| ${columns.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${columns.map((c) => fmt(r[c] ?? '')).join(' | ')} |`),
  ]
  console.log(`\n${title}\n\n${lines.join('\n')}\n`)
  const out = join(dirname(fileURLToPath(import.meta.url)), 'results', `${name}.json`)
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, `${JSON.stringify({ name, title, date: new Date().toISOString(), node: process.version, rows, ...extra }, null, 2)}\n`)
  console.log(`wrote ${out}`)
}
