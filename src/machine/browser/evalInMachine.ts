import { CorruptDataError, MachineError, PageScriptError, UsageError } from '../../errors/index.js'
import { printable } from '../../trace/core/printable.js'
import { jsonTextTooDeep, MAX_JSON_DEPTH } from '../../util/jsonDepth.js'
import type { MachineRef } from '../MachineBackend.js'
import { qemuBackend } from '../qemu/qemuBackend.js'
import { GUEST_CDP_CLIENT } from './browserGuest.js'

/** The longest script `evalInMachine` takes: it travels base64 on a guest command line, under Linux's 128 KiB for one argument. */
export const MAX_EVAL_BYTES = 64 * 1024

/** How long the guest's client waits for a Chromium still starting: under TCG a cold start takes minutes. */
const BROWSER_START_SECONDS = 900

export interface EvalInMachineOptions extends MachineRef {
  /** A JavaScript expression, evaluated in the machine's current page; a promise is awaited. */
  js: string
}

/**
 * Evaluate `js` in the current page of a browser machine's Chromium and return its value
 * as JSON (undefined and what JSON cannot hold become null). The page's exception is
 * PageScriptError (exit 1). The guest's answer is untrusted: one that is not the client's
 * JSON line, or nests deeper than `MAX_JSON_DEPTH`, is CorruptDataError (exit 5). Text the
 * guest or page chose reaches error messages printable (controls escaped), raw in `data`.
 */
export async function evalInMachine(o: EvalInMachineOptions): Promise<unknown> {
  const script = Buffer.from(o.js, 'utf8')
  if (script.length > MAX_EVAL_BYTES) throw new UsageError(`a script to evaluate in a machine is at most ${MAX_EVAL_BYTES} bytes, not ${script.length}`, { value: o.machine })
  const { exitCode, stdout, stderr } = await qemuBackend.exec({ ...o, command: `${GUEST_CDP_CLIENT} eval ${script.toString('base64')} ${BROWSER_START_SECONDS}` })
  if (exitCode !== 0)
    throw new MachineError(`machine ${o.machine} is not a browser machine, or its Chromium did not answer: ${printable(stderr.trim()) || `exit ${exitCode}`}`, {
      machine: o.machine,
      stderr,
    })
  const answer = guestAnswer(stdout, o.machine)
  if ('exception' in answer)
    throw new PageScriptError(`the script threw in machine ${o.machine}'s page: ${printable(answer.exception)}`, { machine: o.machine, exception: answer.exception })
  return answer.value
}

function guestAnswer(stdout: string, machine: string): { value: unknown } | { exception: string } {
  if (jsonTextTooDeep(stdout))
    throw new CorruptDataError<{ limit: number }>(`machine ${machine}'s CDP client answered JSON nesting deeper than ${MAX_JSON_DEPTH} levels`, { limit: MAX_JSON_DEPTH })
  let parsed: unknown
  try {
    parsed = JSON.parse(stdout)
  } catch {
    parsed = null
  }
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const answer = parsed as Record<string, unknown>
    if (typeof answer['exception'] === 'string') return { exception: answer['exception'] }
    if (Object.hasOwn(answer, 'value')) return { value: answer['value'] ?? null }
  }
  throw new CorruptDataError(`machine ${machine}'s CDP client answered something other than its JSON line`, {})
}
