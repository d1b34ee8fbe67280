import fc from 'fast-check'
import { applyByteOp, byteOp, type ByteOp } from './byteMutations.js'

/**
 * Mutations of JSON documents at the level of their syntax tree, so that what a parser
 * sees stays mostly JSON: a value replaced by another (random JSON, or one of the values
 * that broke parsers before: 1e400, unsafe integers, digests naming paths), a value
 * nested thousands deep, a key written twice or a `__proto__` key (text JSON.stringify
 * cannot write), a member removed or added, an array element repeated thousands of times.
 * A few byte mutations may follow on the text.
 */
type Node = { t: 'obj'; members: Array<[string, Node]> } | { t: 'arr'; items: Node[] } | { t: 'raw'; text: string }

export type JsonOp =
  | { op: 'replace'; node: number; with: string }
  | { op: 'deepen'; node: number; depth: number; brace: boolean }
  | { op: 'duplicateKey'; node: number; with: string }
  | { op: 'protoKey'; node: number; with: string }
  | { op: 'remove'; node: number }
  | { op: 'add'; node: number; key: string; with: string }
  | { op: 'grow'; node: number; times: number }

/** What one `grow` may add to a document's text: enough to cost a parser, not enough to cost the fuzzer its memory. */
const MAX_GROWTH = 4 * 1024 * 1024

const HOSTILE_VALUES = [
  '1e400',
  '-1e400',
  '1e308',
  '9007199254740993',
  '-1',
  '0.5',
  '-0',
  '""',
  'null',
  'true',
  '[]',
  '{}',
  '"sha256:../../../etc/passwd"',
  `"sha256:${'0'.repeat(64)}"`,
  '"../../x"',
  '"/etc/passwd"',
  '"\\u0000"',
  '"\\ud800"',
  `"${'A'.repeat(70_000)}"`,
  '{"__proto__":{"polluted":true}}',
]

const value = fc.oneof(
  fc.constantFrom(...HOSTILE_VALUES),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
)
const node = fc.nat()

export const jsonOp: fc.Arbitrary<JsonOp> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('replace' as const), node, with: value }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('deepen' as const),
      node,
      depth: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.constantFrom(255, 256, 257, 1000, 100_000)),
      brace: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('duplicateKey' as const), node, with: value }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('protoKey' as const), node, with: value }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('remove' as const), node }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('add' as const),
      node,
      key: fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('kind', 'schemaVersion', 'tree', 'size', 'entries', 'chunks')),
      with: value,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('grow' as const), node, times: fc.oneof(fc.integer({ min: 2, max: 8 }), fc.constantFrom(1000, 5000)) }) },
)

/** The syntax tree of a parsed value (leaves keep their JSON text). */
export function toNode(value: unknown): Node {
  if (Array.isArray(value)) return { t: 'arr', items: value.map(toNode) }
  if (typeof value === 'object' && value !== null) return { t: 'obj', members: Object.entries(value).map(([k, v]) => [k, toNode(v)]) }
  return { t: 'raw', text: JSON.stringify(value) }
}

export function nodeText(n: Node): string {
  if (n.t === 'raw') return n.text
  if (n.t === 'arr') return `[${n.items.map(nodeText).join(',')}]`
  return `{${n.members.map(([k, v]) => `${JSON.stringify(k)}:${nodeText(v)}`).join(',')}}`
}

/** Every node, the root first, with a way to replace it in its parent. */
function nodesOf(root: Node): Array<{ node: Node; set: (n: Node) => void }> {
  const found: Array<{ node: Node; set: (n: Node) => void }> = []
  const visit = (n: Node, set: (m: Node) => void) => {
    found.push({ node: n, set })
    if (n.t === 'arr') n.items.forEach((item, i) => visit(item, (m) => (n.items[i] = m)))
    if (n.t === 'obj') n.members.forEach((member) => visit(member[1], (m) => (member[1] = m)))
  }
  visit(root, () => undefined)
  return found
}

/** Apply one mutation to the tree rooted at `root` (changed in place; the root itself is replaced through `holder`). */
function applyJsonOp(holder: { root: Node }, m: JsonOp): void {
  const nodes = nodesOf(holder.root)
  const target = nodes[m.node % nodes.length]!
  const set = target.node === holder.root ? (n: Node) => (holder.root = n) : target.set
  const n = target.node
  switch (m.op) {
    case 'replace':
      return set({ t: 'raw', text: m.with })
    case 'deepen': {
      const [open, close] = m.brace ? ['{"a":', '}'] : ['[', ']']
      return set({ t: 'raw', text: `${open.repeat(m.depth)}${nodeText(n)}${close.repeat(m.depth)}` })
    }
    case 'duplicateKey':
      if (n.t === 'obj' && n.members.length > 0) n.members.push([n.members[m.node % n.members.length]![0], { t: 'raw', text: m.with }])
      return
    case 'protoKey':
      if (n.t === 'obj') n.members.push(['__proto__', { t: 'raw', text: m.with }])
      return
    case 'remove':
      if (n.t === 'obj' && n.members.length > 0) n.members.splice(m.node % n.members.length, 1)
      if (n.t === 'arr' && n.items.length > 0) n.items.splice(m.node % n.items.length, 1)
      return
    case 'add':
      if (n.t === 'obj') n.members.push([m.key, { t: 'raw', text: m.with }])
      if (n.t === 'arr') n.items.push({ t: 'raw', text: m.with })
      return
    case 'grow': {
      if (n.t !== 'arr' || n.items.length === 0) return
      const item: Node = { t: 'raw', text: nodeText(n.items[m.node % n.items.length]!) }
      const times = Math.min(m.times, Math.floor(MAX_GROWTH / (item.text.length + 1)))
      n.items.push(...Array<Node>(times).fill(item))
      return
    }
  }
}

/** The JSON text `text` with `ops` applied (unchanged when it does not parse). */
export function mutateJsonText(text: string, ops: JsonOp[]): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return text
  }
  const holder = { root: toNode(parsed) }
  for (const op of ops) applyJsonOp(holder, op)
  return nodeText(holder.root)
}

const jsonOps = fc.array(jsonOp, { minLength: 1, maxLength: 4 })
const trailingByteOps: fc.Arbitrary<ByteOp[]> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<ByteOp[]>([]) },
  { weight: 1, arbitrary: fc.array(byteOp, { minLength: 1, maxLength: 2 }) },
)

/** A JSON seed from `seeds` with one to four syntax-tree mutations, sometimes a byte mutation or two after. */
export function mutatedJson(seeds: Buffer[]): fc.Arbitrary<Buffer> {
  return fc
    .record({ seed: fc.integer({ min: 0, max: seeds.length - 1 }), ops: jsonOps, bytes: trailingByteOps })
    .map(({ seed, ops, bytes }) => bytes.reduce(applyByteOp, Buffer.from(mutateJsonText(seeds[seed]!.toString('utf8'), ops))))
}

/** A JSONL seed from `seeds` with one line mutated as JSON (and sometimes a byte mutation or two after). */
export function mutatedJsonLines(seeds: Buffer[]): fc.Arbitrary<Buffer> {
  return fc.record({ seed: fc.integer({ min: 0, max: seeds.length - 1 }), line: fc.nat(), ops: jsonOps, bytes: trailingByteOps }).map(({ seed, line, ops, bytes }) => {
    const lines = seeds[seed]!.toString('utf8').split('\n')
    const i = line % lines.length
    lines[i] = mutateJsonText(lines[i]!, ops)
    return bytes.reduce(applyByteOp, Buffer.from(lines.join('\n')))
  })
}
