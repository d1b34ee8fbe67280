import { assertDepth } from '../../util/jsonDepth.js'
import { isSealed, type JsonValue, type Run, type Step } from '../../objects/Run.js'
import { hashPayload } from '../core/stepHash.js'

const EPOCH = '1970-01-01T00:00:00.000Z'
/**
 * Ids APIs generate per call: OpenAI `chatcmpl-…`, `call_…`, Anthropic `msg_…`, `toolu_…`,
 * request ids, UUIDs. Short ones (`chatcmpl-1`, local and mock servers) count when they
 * hold a digit, so words like `thread-safe` or `batch_size` stay as they are.
 */
const GENERATED_ID =
  /\b(?:(?:chatcmpl|cmpl|msg|resp|req|call|toolu|run|file|asst|thread|evt|batch)[-_](?:[A-Za-z0-9]{6,}|[A-Za-z]*\d[A-Za-z0-9]*)|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/g
const TIME_FIELDS = new Set(['created', 'created_at', 'createdAt', 'timestamp'])
const TIME_IN_TEXT = /("(?:created|created_at|createdAt|timestamp)"\s*:\s*)(\d+|"[^"]*")/g
const VOLATILE_HEADERS =
  /^(x-request-id|request-id|openai-processing-ms|cf-ray|cf-cache-status|server-timing|x-ratelimit-.*|anthropic-ratelimit-.*|retry-after|age|etag|set-cookie|openai-organization|x-envoy-upstream-service-time)$/i

/**
 * The stable form of a run for golden files and CI diffs: timestamps, durations and the
 * run id fixed; ids generated per call replaced by `<id-N>` in order of first
 * appearance (consistently, so a tool-call id echoed back still matches); creation
 * times zeroed; per-request headers dropped. Hashes are recomputed. Encrypted payloads
 * are left as they are (only the run's own volatile fields change).
 */
export function normalizeRun(run: Run): Run {
  const ids = new Map<string, string>()
  const encrypted = run.redaction === 'encrypt'
  if (!encrypted) for (const s of run.steps) collectIds([s.input, s.output], ids)
  const idRe =
    ids.size > 0
      ? new RegExp(
          [...ids.keys()]
            .sort((a, b) => b.length - a.length)
            .map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('|'),
          'g',
        )
      : null
  const fixText = (t: string) =>
    (idRe ? t.replace(idRe, (m) => ids.get(m)!) : t).replace(TIME_IN_TEXT, (_m, k: string, v: string) => `${k}${v.startsWith('"') ? `"${EPOCH}"` : '0'}`)
  const fix = (v: JsonValue, depth = 0): JsonValue => {
    if (typeof v === 'string') return fixText(v)
    if (v && typeof v === 'object') assertDepth(depth + 1)
    if (Array.isArray(v)) return v.map((x) => fix(x, depth + 1))
    if (v && typeof v === 'object') {
      const out: { [key: string]: JsonValue } = {}
      for (const [k, x] of Object.entries(v)) {
        if (TIME_FIELDS.has(k) && (typeof x === 'number' || typeof x === 'string')) out[k] = typeof x === 'number' ? 0 : EPOCH
        else if (k === 'headers' && x && typeof x === 'object' && !Array.isArray(x))
          out[k] = fix(Object.fromEntries(Object.entries(x).filter(([h]) => !VOLATILE_HEADERS.test(h))), depth + 1)
        else out[k] = fix(x, depth + 1)
      }
      return out
    }
    return v
  }
  const steps = run.steps.map((s): Step => {
    const { replayed: _r, ...meta } = s.meta ?? {}
    const step: Step = { ...s, startedAt: EPOCH, durationMs: 0, ...(Object.keys(meta).length ? { meta: encrypted ? meta : (fix(meta) as Step['meta']) } : {}) }
    if (!s.meta || Object.keys(meta).length === 0) delete step.meta
    if (encrypted || isSealed(s.input)) return step
    step.input = fix(s.input)
    step.output = fix(s.output)
    step.inputHash = hashPayload(step.input)
    step.outputHash = hashPayload(step.output)
    return step
  })
  return { ...run, runId: 'run-00000000000000000000', startedAt: EPOCH, endedAt: EPOCH, steps }
}

function collectIds(values: JsonValue[], ids: Map<string, string>): void {
  const visit = (v: JsonValue, depth: number): void => {
    if (typeof v === 'string') {
      for (const m of v.matchAll(GENERATED_ID)) if (!ids.has(m[0])) ids.set(m[0], `<id-${ids.size + 1}>`)
      return
    }
    if (!v || typeof v !== 'object') return
    assertDepth(depth + 1)
    if (Array.isArray(v)) v.forEach((x) => visit(x, depth + 1))
    else for (const [k, x] of Object.entries(v)) if (!VOLATILE_HEADERS.test(k)) visit(x, depth + 1)
  }
  values.forEach((v) => visit(v, 0))
}
