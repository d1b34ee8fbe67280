import { SandboxError } from '../errors/index.js'

/** Resource limits of a sandboxed command; each is off when not given. */
export interface SandboxLimits {
  /** Address-space ceiling: bytes, or a size like "512M" (K, M, G, T; powers of 1024). */
  memory?: number | string
  /** Most processes and threads the command may run at once. */
  pids?: number
  /** CPU time in seconds (the kernel sends SIGXCPU, then SIGKILL). */
  cpu?: number
  /** Wall-clock limit: milliseconds, or a duration like "60s", "500ms", "2m", "1h"; 0 for none. @default DEFAULT_TIMEOUT */
  timeout?: number | string
}

/** Wall-clock limit of a sandboxed run unless the caller gives one (`timeout: 0` for none): a hung `npm install` must not run for ever. */
export const DEFAULT_TIMEOUT = '10m'

const SIZE_UNITS: Record<string, number> = { '': 1, B: 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 }
const TIME_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** "512M" -> 536870912; a number passes through. */
export function parseSize(value: number | string, what = 'memory'): number {
  const match = typeof value === 'number' ? null : /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$/i.exec(value)
  const bytes = typeof value === 'number' ? value : match ? Number(match[1]) * SIZE_UNITS[match[2]!.toUpperCase()]! : NaN
  if (!Number.isFinite(bytes) || bytes <= 0) throw new SandboxError(`invalid ${what} size ${JSON.stringify(value)} (use e.g. 512M or 2G)`, { value })
  return Math.floor(bytes)
}

/** "60s" -> 60000. A number is milliseconds; a string without a unit is seconds ("60" = 60s). */
export function parseDuration(value: number | string, what = 'timeout'): number {
  const match = typeof value === 'number' ? null : /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value)
  const ms = typeof value === 'number' ? value : match ? Number(match[1]) * TIME_UNITS[match[2] ?? 's']! : NaN
  if (!Number.isFinite(ms) || ms <= 0) throw new SandboxError(`invalid ${what} ${JSON.stringify(value)} (use e.g. 60s, 500ms, 2m)`, { value })
  return ms
}

function positiveInteger(value: number | undefined, what: string): number {
  if (value === undefined) return 0
  if (!Number.isSafeInteger(value) || value <= 0) throw new SandboxError(`invalid ${what} ${JSON.stringify(value)}: a positive whole number`, { value })
  return value
}

/** The rlimits the init script applies (0 = none), checked once here. */
export function rlimitsOf(limits: SandboxLimits): { as: number; nproc: number; cpu: number } {
  return {
    as: limits.memory === undefined ? 0 : parseSize(limits.memory),
    nproc: positiveInteger(limits.pids, 'pids limit'),
    cpu: positiveInteger(limits.cpu, 'cpu limit (seconds)'),
  }
}
