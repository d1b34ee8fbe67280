import { UsageError } from '../errors/index.js'

/** How long reflog entries are kept by default: git's gc.reflogExpire. */
export const DEFAULT_PRUNE = '90.days'

const UNIT_MS: Record<string, number> = {
  s: 1000,
  sec: 1000,
  second: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  w: 7 * 86_400_000,
  week: 7 * 86_400_000,
  month: 30 * 86_400_000,
  y: 365 * 86_400_000,
  year: 365 * 86_400_000,
}

/**
 * The cutoff an expiry names, as git spells them: `now` (everything), `never` (null:
 * nothing), an age (`90.days`, `2.weeks.ago`, `12h`, `30 days`) counted back from `now`,
 * or a date (`2026-01-31`, any ISO 8601 time). Entries older than the cutoff expire.
 */
export function parseExpiry(text: string, now: Date): Date | null {
  const spec = text.trim().toLowerCase()
  if (spec === 'never') return null
  if (spec === 'now') return now
  const age = /^(\d+)[.\s]*([a-z]+?)s?(?:[.\s]+ago)?$/.exec(spec)
  const unit = age ? UNIT_MS[age[2]!] : undefined
  if (age && unit !== undefined) return new Date(now.getTime() - Number(age[1]) * unit)
  const date = /^\d{4}-\d{2}-\d{2}/.test(spec) ? new Date(text.trim()) : null
  if (date && !Number.isNaN(date.getTime())) return date
  throw new UsageError(`--prune expects now, never, an age like 90.days or 2.weeks.ago, or a date, not ${JSON.stringify(text)}`, { value: text })
}
