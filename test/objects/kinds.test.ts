import { describe, expect, it } from 'vitest'
import { LedgerTamperedError, MalformedObjectError } from '../../src/errors/index.js'
import { sha256 } from '../../src/objects/digest.js'
import { effectPayloadText } from '../../src/objects/EffectPayload.js'
import { objectEdges } from '../../src/objects/kinds.js'
import { validateLedger } from '../../src/objects/Ledger.js'
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
