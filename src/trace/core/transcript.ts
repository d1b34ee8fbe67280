import { basename } from 'node:path'
import { RunArtifactError } from '../../errors/index.js'
import { jsonDataProblem } from '../../util/jsonDataProblem.js'
import { jsonTextTooDeep, MAX_JSON_DEPTH } from '../../util/jsonDepth.js'
import { Redactor } from '../redact/Redactor.js'
import { type JsonValue, makeRunId, type Run, RUN_SCHEMA_VERSION, type Step, type StepType } from '../../objects/Run.js'
import { hashPayload } from './stepHash.js'

/** What `run.meta.transcript` records, beside each step's line, to give the file back byte for byte. */
export interface TranscriptLayout {
  format: 'openai' | 'anthropic'
  file: string
  /** Lines in the file (the empty text after a final newline not counted). */
  lines: number
  /** Blank lines by their 1-based number, as they were (spaces, a carriage return). */
  blank: { [line: string]: string }
  finalNewline: boolean
}

type Message = { [key: string]: JsonValue }

/**
 * A chat transcript (JSONL, one message a line, OpenAI- or Anthropic-style) as a `run`:
 * one step per message, its input the message, its `meta.line` and `meta.text` the line's
 * number and exact text. Secrets are redacted as in any recorded run (secrets mode; `env`'s secret values too), so
 * the file comes back byte for byte when it holds none. RunArtifactError (exit 5) names the
 * first bad line.
 */
export function transcriptToRun(bytes: Buffer, path: string, { now = new Date(), env }: { now?: Date; env: NodeJS.ProcessEnv }): Run {
  const where = basename(path)
  const text = bytes.toString('utf8')
  if (!Buffer.from(text, 'utf8').equals(bytes)) throw new RunArtifactError(`${where} is not UTF-8 text`, { path })
  const rows = text.split('\n')
  const finalNewline = rows[rows.length - 1] === ''
  if (finalNewline) rows.pop()
  const redactor = new Redactor({ mode: 'secrets', env })
  const at = now.toISOString()
  const blank: TranscriptLayout['blank'] = {}
  const steps: Step[] = []
  rows.forEach((row, i) => {
    if (row.trim() === '') {
      blank[String(i + 1)] = row
      return
    }
    const message = parseMessage(row, `${where} line ${i + 1}`)
    const input = redactor.redact(message)
    steps.push({
      idx: steps.length,
      name: `message.${message['role'] as string}`,
      type: stepType(message),
      input,
      output: null,
      inputHash: hashPayload(input),
      outputHash: hashPayload(null),
      startedAt: at,
      durationMs: 0,
      meta: { line: i + 1, text: redactor.redactText(row) },
    })
  })
  if (steps.length === 0) throw new RunArtifactError(`${where} holds no messages`, { path })
  const transcript: TranscriptLayout = { format: formatOf(steps), file: where, lines: rows.length, blank, finalNewline }
  return {
    kind: 'run',
    schemaVersion: RUN_SCHEMA_VERSION,
    runId: makeRunId(now.getTime()),
    entrypoint: `transcript ${where}`,
    startedAt: at,
    endedAt: at,
    status: 'ok',
    redaction: 'secrets',
    steps,
    meta: { transcript: transcript as unknown as JsonValue },
  }
}

/** The transcript a run was made from, as the exact text it came in; null for a run that was not a transcript. */
export function transcriptText(run: Run): string | null {
  const layout = run.meta['transcript'] as unknown as TranscriptLayout | undefined
  if (!layout || typeof layout !== 'object' || typeof layout.lines !== 'number') return null
  const lines: string[] = Array.from({ length: layout.lines }, (_, i) => layout.blank?.[String(i + 1)] ?? '')
  for (const step of run.steps) {
    const line = step.meta?.['line']
    const text = step.meta?.['text']
    if (typeof line !== 'number' || typeof text !== 'string' || line < 1 || line > layout.lines) return null
    lines[line - 1] = text
  }
  return lines.join('\n') + (layout.finalNewline ? '\n' : '')
}

/** The messages of a transcript run, in order (null for another run). */
export function transcriptMessages(run: Run): JsonValue[] | null {
  return transcriptText(run) === null ? null : run.steps.map((s) => s.input)
}

function parseMessage(row: string, where: string): Message {
  const fail = (what: string): never => {
    throw new RunArtifactError(`${where}: ${what}`, { where, problem: what })
  }
  if (jsonTextTooDeep(row)) fail(`nests deeper than ${MAX_JSON_DEPTH} levels`)
  let value: unknown
  try {
    value = JSON.parse(row)
  } catch (err) {
    return fail(`not JSON (${(err as Error).message})`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('not a JSON object (one message per line)')
  const problem = jsonDataProblem(value)
  if (problem) fail(problem)
  const m = value as Message
  if (typeof m['role'] !== 'string' || m['role'] === '') fail('no "role" string')
  const content = m['content']
  const blocks = Array.isArray(content) && content.every((b) => typeof b === 'object' && b !== null && !Array.isArray(b))
  if (content !== undefined && content !== null && typeof content !== 'string' && !blocks) fail('"content" must be a string, an array of blocks or null')
  if (m['tool_calls'] !== undefined && !Array.isArray(m['tool_calls'])) fail('"tool_calls" must be an array')
  if (m['tool_call_id'] !== undefined && typeof m['tool_call_id'] !== 'string') fail('"tool_call_id" must be a string')
  return m
}

/** Assistant turns are the model's (llm); tool results are tool steps; the rest is input to the model. */
function stepType(m: Message): StepType {
  if (m['role'] === 'assistant') return 'llm'
  if (m['role'] === 'tool' || hasBlock(m, 'tool_result')) return 'tool'
  return 'input'
}

function hasBlock(m: Message, type: string): boolean {
  return Array.isArray(m['content']) && m['content'].some((b) => (b as Message)['type'] === type)
}

/** Anthropic-style when a message carries content blocks of Anthropic's tool kinds or no message has OpenAI's tool fields and some content is blocks. */
function formatOf(steps: Step[]): TranscriptLayout['format'] {
  const messages = steps.map((s) => s.input as Message)
  if (messages.some((m) => hasBlock(m, 'tool_use') || hasBlock(m, 'tool_result'))) return 'anthropic'
  if (messages.some((m) => m['role'] === 'tool' || m['tool_calls'] !== undefined || m['tool_call_id'] !== undefined)) return 'openai'
  return messages.some((m) => Array.isArray(m['content'])) ? 'anthropic' : 'openai'
}
