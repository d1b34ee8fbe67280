import type { ImageDescription } from '../../image/describeImage.js'
import type { JsonValue } from '../../objects/Run.js'
import { formatBytes } from './format.js'
import { counted } from '../../util/plural.js'

type Obj = { [key: string]: JsonValue }

/** `forkpoint show` of an image: every layer, one section each. */
export function renderImage(image: ImageDescription): string {
  const lines = [`snapshot ${image.id}`]
  if (image.parents.length > 0) lines.push(`parents: ${image.parents.join(' ')}`)
  if (image.meta.agent) lines.push(`agent: ${image.meta.agent}`)
  lines.push(`message: ${image.meta.message}`, `created: ${image.meta.createdAt}`)
  lines.push(`world: tree ${image.world.tree}, ${counted(image.world.files, 'file')}, ${formatBytes(image.world.bytes)}`)
  const env = Object.entries(image.world.env ?? {})
  lines.push(env.length > 0 ? `env: ${env.length} variables` : 'env: not recorded', ...env.map(([name, value]) => `  ${name}=${value}`))
  lines.push(...renderTrace(image.trace))
  for (const layer of image.layers) lines.push(`${layer.layer}: ${layer.id} (${layer.kind ?? 'missing'})`)
  return lines.join('\n')
}

function renderTrace(trace: ImageDescription['trace']): string[] {
  if (!trace) return ['trace: none']
  const head = `trace: ${trace.runId} (${trace.id}), ${trace.entrypoint}, ${trace.status}`
  if (trace.messages) return [`${head}, ${trace.messages.length} messages`, ...trace.messages.map((m, i) => `  [${i}] ${messageLine(m as Obj)}`)]
  return [`${head}, ${counted(trace.steps.length, 'step')}`, ...trace.steps.map((s) => `  [${s.idx}] ${s.type} ${s.name}`)]
}

/** One message on one line: its role and text, tool calls as `-> name(args)`, tool results as `<- text`. */
function messageLine(m: Obj): string {
  const parts: string[] = []
  const content = m['content']
  if (typeof content === 'string') parts.push(content)
  else if (Array.isArray(content)) for (const block of content as Obj[]) parts.push(blockText(block))
  for (const call of (Array.isArray(m['tool_calls']) ? m['tool_calls'] : []) as Obj[]) {
    const fn = (call['function'] ?? {}) as Obj
    parts.push(`-> ${String(fn['name'])}(${String(fn['arguments'] ?? '')})`)
  }
  if (typeof m['tool_call_id'] === 'string') parts.unshift(`<- ${m['tool_call_id']}:`)
  return `${String(m['role'])}: ${clip(parts.join(' '))}`
}

function blockText(block: Obj): string {
  if (block['type'] === 'text') return String(block['text'])
  if (block['type'] === 'tool_use') return `-> ${String(block['name'])}(${JSON.stringify(block['input'] ?? {})})`
  if (block['type'] === 'tool_result') return `<- ${typeof block['content'] === 'string' ? block['content'] : JSON.stringify(block['content'])}`
  return `[${String(block['type'])}]`
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat
}
