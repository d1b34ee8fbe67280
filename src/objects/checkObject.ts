import type { z } from 'zod'
import { MalformedObjectError } from '../errors/index.js'
import { previewValue } from '../util/previewValue.js'

/**
 * A parsed object checked against its kind's schema and returned unchanged (fields a newer
 * writer added are kept); MalformedObjectError (exit 5) naming where the first problem lies.
 * `where` names the object (`model layer sha256:…`), `what` its kind for people (`model layer`).
 */
export function checkObject<T>(schema: z.ZodType<T>, value: unknown, where: string, what: string, data: MalformedObjectError['data'] = {}): T {
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw new MalformedObjectError(`${where} is not a valid ${what}: ${issueOf(parsed.error)}`, data)
  return value as T
}

/** Where the first problem lies and what it is, its path bounded: keys may be the data's own. */
function issueOf(error: z.ZodError): string {
  const [issue] = error.issues
  return issue ? `${previewValue(issue.path.join('.'))}: ${issue.message}` : 'unknown problem'
}
