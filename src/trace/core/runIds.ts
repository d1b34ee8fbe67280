import { createHash } from 'node:crypto'

/** Ids that name their ref as they are: a git ref component from the run id alphabet, never starting with `_`. */
const REF_SAFE = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?$/

/**
 * The ref that keeps a run alive: `refs/runs/<id>` when the id is itself a safe ref
 * component (no `:`, no `..`, no leading `.`, `-` or `_`, no trailing `.`, not `*.lock`),
 * else `refs/runs/_<sha256 hex of the id>`; a plain one never starts with `_`, so the two
 * forms never meet.
 */
export function runRefName(runId: string): string {
  const plain = REF_SAFE.test(runId) && !runId.includes('..') && !runId.endsWith('.lock')
  return `refs/runs/${plain ? runId : `_${createHash('sha256').update(runId).digest('hex')}`}`
}
