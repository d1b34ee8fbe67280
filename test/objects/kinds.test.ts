import { describe, expect, it } from 'vitest'
import { LedgerTamperedError, MalformedObjectError } from '../../src/errors/index.js'
import { validateCheckpointLog } from '../../src/objects/CheckpointLog.js'
import { validateChunks } from '../../src/objects/Chunks.js'
import { sha256 } from '../../src/objects/digest.js'
import { effectPayloadText } from '../../src/objects/EffectPayload.js'
import { objectEdges } from '../../src/objects/kinds.js'
import { validateKvCacheLayer } from '../../src/objects/KvCacheLayer.js'
import { validateLedger } from '../../src/objects/Ledger.js'
import { validateMachineImage } from '../../src/objects/MachineImage.js'
import { validateMachineLayer } from '../../src/objects/MachineLayer.js'
import { validateModelLayer } from '../../src/objects/ModelLayer.js'
import { makeSnapshot, validateSnapshot } from '../../src/objects/Snapshot.js'

const tree = sha256('a tree')
const parent = sha256('a parent')
const good = () => makeSnapshot({ parents: [parent], tree, message: 'm', createdAt: new Date(0), layers: { trace: sha256('a run') } })

describe('a snapshot (the agent image) read from the store', () => {
  it('is the object itself once valid, with the fields a newer writer added', () => {
    const snapshot = { ...good(), fromNewerWriter: { kept: true } }
    expect(validateSnapshot(snapshot, 'snapshot x')).toBe(snapshot)
  })

  it.each([
    ['a schema version this code does not write', { schemaVersion: 2 }, /schemaVersion/],
    ['a layer that is not a digest', { effects: 'HEAD' }, /effects/],
    ['an env value that is not text', { world: { tree, env: { A: 1 } } }, /world\.env\.A/],
    ['a parent that is not a digest', { parents: ['sha256:short'] }, /parents\.0/],
    ['a fork index that is not a count', { meta: { message: 'm', createdAt: 'now', fork: { of: parent, index: -1 } } }, /meta\.fork\.index/],
  ])('is refused (exit 5) with %s, saying where', (_, change, where) => {
    const read = () => validateSnapshot({ ...good(), ...change }, 'snapshot x')
    expect(read).toThrow(MalformedObjectError)
    expect(read).toThrow(/^snapshot x is not a valid snapshot: /)
    expect(read).toThrow(where)
    expect(() => read()).toThrow(expect.objectContaining({ exitCode: 5 }))
  })
})

describe('a ledger read from the store', () => {
  const entry = (seq: number) => ({
    seq,
    prev: '0'.repeat(64),
    at: new Date(0).toISOString(),
    tool: 'send',
    argsHash: sha256(`args ${seq}`),
    idempotencyKey: `k${seq}`,
    class: 'irreversible',
    status: 'executed',
    resultHash: sha256(`result ${seq}`),
  })
  const ledger = (entries: unknown[]) => ({ kind: 'ledger', schemaVersion: 1, chain: { alg: 'sha256' }, entries, head: 'h' })

  it('names its first malformed entry, and refuses a ledger whose own fields are off as a whole', () => {
    expect(validateLedger(ledger([entry(0), entry(1)]), 'ledger x').entries).toHaveLength(2)
    expect(() => validateLedger(ledger([{ ...entry(0), at: 'not a time' }]), 'ledger x')).toThrow(LedgerTamperedError)
    const executedWithoutResult = { ...entry(2), resultHash: null }
    expect(() => validateLedger(ledger([entry(0), { ...entry(1), class: 'sometimes' }, executedWithoutResult]), 'ledger x')).toThrow(/^ledger x: entry 1 is malformed$/)
    expect(() => validateLedger(ledger([entry(0), executedWithoutResult]), 'ledger x')).toThrow(/entry 1 is malformed/)
    expect(() => validateLedger({ ...ledger([executedWithoutResult]), chain: { alg: 'hmac-sha256' } }, 'ledger x')).toThrow(/^ledger x is not a valid effects ledger$/)
  })
})

describe('the edges of each kind', () => {
  const edgesOf = (object: Record<string, unknown>) => objectEdges(object)
  const named = sha256('named')
  const text = sha256('only text')

  it('are its references, never its users text', () => {
    const snapshot = makeSnapshot({ parents: [parent], tree, message: text, agent: text, env: { A: text } })
    expect([...edgesOf(snapshot)].sort()).toEqual([parent, tree].sort())
    const treeObject = {
      kind: 'tree',
      schemaVersion: 1,
      entries: [
        { name: text, type: 'symlink', mode: 0o777, size: 71, target: text },
        { name: 'f', type: 'file', mode: 0o644, size: 1, blob: named },
      ],
    }
    expect(edgesOf(treeObject)).toEqual([named])
    expect(edgesOf({ kind: 'run', schemaVersion: 1, steps: [{ output: named }] })).toEqual([])
    expect(edgesOf({ kind: 'checkpoint-log', schemaVersion: 1, previous: named, entry: { ns: text, id: text } })).toEqual([named])
    expect(edgesOf({ ...machineLayer(), qemuVersion: text })).toEqual([named, named, named, named])
    expect(edgesOf({ ...machineImage(), recipe: text, kernelRelease: text, cmdline: text, rootfs: { disk: named, diskBytes: 1, packages: [text] } })).toEqual([named, named, named])
  })

  it('of a kind without a rule are every digest in it', () => {
    expect(edgesOf({ kind: 'newer-kind', schemaVersion: 1, deep: { list: [named] } })).toEqual([named])
  })
})

describe('effect payloads', () => {
  it('give their JSON text only when they are what was asked for', () => {
    expect(effectPayloadText({ kind: 'effect-args', schemaVersion: 1, tool: 't', args: '{}' }, 'effect-args')).toBe('{}')
    expect(effectPayloadText({ kind: 'effect-args', schemaVersion: 1, tool: 't', args: '{}' }, 'effect-result')).toBeNull()
    expect(effectPayloadText({ kind: 'effect-result', schemaVersion: 1, value: { not: 'text' } }, 'effect-result')).toBeNull()
  })
})

const named = sha256('named')
const machineLayer = () => ({
  kind: 'machine',
  schemaVersion: 1,
  image: named,
  memoryMiB: 256,
  memory: named,
  devices: named,
  disk: named,
  diskBytes: 1 << 20,
  qemuVersion: '7.2.22',
  accelerator: 'tcg',
})
const machineImage = () => ({ kind: 'machine-image', schemaVersion: 1, recipe: 'busybox', kernelRelease: '6.1.0', kernel: named, initrd: named, cmdline: 'console=ttyS0' })
const kvCache = () => ({ kind: 'kv-cache', schemaVersion: 1, modelSha256: 'a'.repeat(64), contextSize: 8, tokens: [1, 2], pending: [3], state: named })
const typed = { type: 'json', blob: named }
const checkpointLog = () => ({
  kind: 'checkpoint-log',
  schemaVersion: 1,
  framework: 'langgraph',
  previous: null,
  entry: { op: 'put', ns: '', id: 'c1', parent: null, checkpoint: typed, metadata: typed, values: [{ channel: 'a', version: 1, value: typed }] },
})
const chunks = () => ({
  kind: 'chunks',
  schemaVersion: 1,
  size: 3,
  chunks: [
    { blob: named, size: 1 },
    { blob: named, size: 2 },
  ],
})

/** `levels` arrays, one inside the other, around `inner`. */
const nested = (levels: number, inner: unknown): unknown => (levels === 0 ? inner : [nested(levels - 1, inner)])

/** Each kind's check, and objects of it that hostile data may hold instead of a valid one. */
const KINDS: Array<{ kind: string; validate: (value: unknown, where: string) => unknown; good: () => Record<string, unknown>; bad: Array<[string, Record<string, unknown>]> }> = [
  {
    kind: 'model',
    validate: validateModelLayer,
    good: () => ({ kind: 'model', schemaVersion: 1, tree: named }),
    bad: [
      ['its tree a number', { tree: 7 }],
      ['no tree', { tree: undefined }],
      ['a schema version this code does not write', { schemaVersion: 2 }],
      ['its tree nested in arrays', { tree: nested(64, named) }],
    ],
  },
  {
    kind: 'kv-cache',
    validate: validateKvCacheLayer,
    good: kvCache,
    bad: [
      ['its model a digest of the store', { modelSha256: named }],
      ['a token that is text', { tokens: [1, '2'] }],
      ['a negative token', { pending: [-1] }],
      ['a token past the safe integers', { tokens: [2 ** 60] }],
      ['no pending token', { pending: [] }],
      ['a context of 2^40 tokens', { contextSize: 2 ** 40 }],
      ['more tokens than its context', { contextSize: 2 }],
      ['no state', { state: undefined }],
      ['tokens nested in arrays', { tokens: nested(64, [1]) }],
    ],
  },
  {
    kind: 'machine',
    validate: validateMachineLayer,
    good: machineLayer,
    bad: [
      ['its memory a string', { memoryMiB: '256' }],
      ['a memory of 2^53 MiB', { memoryMiB: 2 ** 53 }],
      ['a disk of no bytes', { diskBytes: 0 }],
      ['a fractional disk', { diskBytes: 1.5 }],
      ['an accelerator of its own', { accelerator: 'hvf' }],
      ['a network device that is not true', { nic: false }],
      ['no devices', { devices: undefined }],
      ['a QEMU version nested in arrays', { qemuVersion: nested(64, '7.2.22') }],
    ],
  },
  {
    kind: 'machine-image',
    validate: validateMachineImage,
    good: machineImage,
    bad: [
      ['no recipe', { recipe: undefined }],
      ['a recipe that is an object', { recipe: { name: 'busybox' } }],
      ['a command line holding NUL', { cmdline: 'console=ttyS0\u0000init=/bin/sh' }],
      ['a root filesystem of null', { rootfs: null }],
      ['a package that is not text', { rootfs: { disk: named, diskBytes: 1, packages: [{ name: 'x' }] } }],
      ['a root filesystem of 2^60 bytes', { rootfs: { disk: named, diskBytes: 2 ** 60, packages: [] } }],
      ['its kernel nested in arrays', { kernel: nested(64, named) }],
    ],
  },
  {
    kind: 'checkpoint-log',
    validate: (value, where) => validateCheckpointLog(value, where as never),
    good: checkpointLog,
    bad: [
      ['another framework', { framework: 'crewai' }],
      ['a previous step that is not a digest', { previous: 'HEAD' }],
      ['an op of its own', { entry: { op: 'delete', ns: '', id: 'c1' } }],
      ['an empty checkpoint id', { entry: { ...checkpointLog().entry, id: '' } }],
      ['a value whose blob is not a digest', { entry: { ...checkpointLog().entry, values: [{ channel: 'a', version: 1, value: { type: 'json', blob: 'x' } }] } }],
      ['a write index past the safe integers', { entry: { op: 'writes', ns: '', id: 'c1', taskId: 't', taskPath: 'p', writes: [{ idx: 2 ** 60, channel: 'a', value: typed }] } }],
      ['writes without a task', { entry: { op: 'writes', ns: '', id: 'c1', writes: [] } }],
      ['an entry nested in arrays', { entry: nested(64, checkpointLog().entry) }],
    ],
  },
  {
    kind: 'chunks',
    validate: validateChunks,
    good: chunks,
    bad: [
      ['sizes that do not add up', { size: 4 }],
      ['a schema version this code does not write', { schemaVersion: 2 }],
      [
        'a size past the safe integers',
        {
          size: 2 ** 53,
          chunks: [
            { blob: named, size: 2 ** 53 - 1 },
            { blob: named, size: 1 },
          ],
        },
      ],
      ['a chunk of no bytes', { size: 0, chunks: [{ blob: named, size: 0 }] }],
      ['a chunk that is null', { chunks: [null] }],
      ['chunks nested in arrays', { chunks: nested(64, chunks().chunks) }],
    ],
  },
]

describe.each(KINDS)('a $kind object read from the store', ({ kind, validate, good, bad }) => {
  it('is the object itself once valid', () => {
    const object = good()
    expect(validate(object, `${kind} x`)).toBe(object)
  })

  it.each(bad)('is refused (exit 5) with %s', (_, change) => {
    const read = () => validate({ ...good(), ...change }, `${kind} x`)
    expect(read).toThrow(MalformedObjectError)
    expect(read).toThrow(expect.objectContaining({ exitCode: 5 }))
  })

  it.each([null, 7, 'text', [], {}])('is refused (exit 5) when it is %j', (value) => {
    expect(() => validate(value, `${kind} x`)).toThrow(MalformedObjectError)
  })
})
