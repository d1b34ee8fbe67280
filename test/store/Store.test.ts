import { promises as fs } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { DigestMismatchError, ObjectNotFoundError, Store, StoreNotFoundError } from '../../src/index.js'
import { canonicalJson } from '../../src/util/canonicalJson.js'
import { sha256 } from '../../src/objects/digest.js'
import { tempDir } from '../helpers/tmp.js'

describe('Store', () => {
  it('stores blobs by the sha256 of their bytes and reads them back', async () => {
    const store = await Store.init(tempDir())
    const digest = await store.writeBlob(Buffer.from('hello'))
    expect(digest).toBe(sha256('hello'))
    expect((await store.readBlob(digest)).toString()).toBe('hello')
    expect(await store.has(digest)).toBe(true)
  })

  it('says which objects it lacks, by a stat each for a few and by listing its directories for many', async () => {
    const store = await Store.init(tempDir())
    const held = await Promise.all(Array.from({ length: 20 }, (_, i) => store.writeBlob(Buffer.from(`held ${i}`))))
    const absent = Array.from({ length: 1500 }, (_, i) => sha256(`absent ${i}`))
    expect(store.lacking([...held.slice(0, 3), ...absent.slice(0, 3)])).toEqual(new Set(absent.slice(0, 3)))
    expect(store.lacking([...held, ...absent])).toEqual(new Set(absent))
    expect(store.lacking([])).toEqual(new Set())
  })

  it('stores structured objects in canonical JSON', async () => {
    const store = await Store.init(tempDir())
    const digest = await store.writeObject({ schemaVersion: 1, kind: 'note', b: 2, a: [true, -0] })
    const bytes = await store.readBlob(digest)
    expect(bytes.toString()).toBe('{"a":[true,0],"b":2,"kind":"note","schemaVersion":1}')
    expect(await store.readObject(digest, 'note')).toMatchObject({ kind: 'note', b: 2 })
  })

  it('detects a corrupt object on read', async () => {
    const store = await Store.init(tempDir())
    const digest = await store.writeBlob(Buffer.from('precious'))
    const path = store.objectPath(digest)
    await fs.chmod(path, 0o644)
    await fs.writeFile(path, 'tampered')
    await expect(store.readBlob(digest)).rejects.toBeInstanceOf(DigestMismatchError)
  })

  it('reports a missing object and a missing store clearly', async () => {
    const store = await Store.init(tempDir())
    await expect(store.readBlob(sha256('nope'))).rejects.toBeInstanceOf(ObjectNotFoundError)
    await expect(Store.open(tempDir())).rejects.toBeInstanceOf(StoreNotFoundError)
  })
})

describe('canonicalJson', () => {
  it('sorts keys by code unit, drops undefined, refuses non-finite numbers', () => {
    expect(canonicalJson({ b: 1, a: { d: undefined, c: 'é' }, '\u00e9': null })).toBe('{"a":{"c":"é"},"b":1,"é":null}')
    expect(canonicalJson([1e21, 0.1, false, 1])).toBe('[1e+21,0.1,false,1]')
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError)
  })

  it('prints arrays of scalars (printed in one call) as it prints any value: -0 as 0, nested arrays, and refuses what it refuses elsewhere', () => {
    expect(
      canonicalJson([
        ['sha256:ab', 0, 12],
        [-0, null, true, '\u2028"'],
      ]),
    ).toBe('[["sha256:ab",0,12],[0,null,true,"\u2028\\""]]')
    expect(canonicalJson([[1, { b: 2, a: 1 }]])).toBe('[[1,{"a":1,"b":2}]]')
    expect(() => canonicalJson([[1, Number.POSITIVE_INFINITY]])).toThrow(TypeError)
    expect(() => canonicalJson([1, undefined])).toThrow(TypeError)
    // eslint-disable-next-line no-sparse-arrays
    expect(() => canonicalJson([1, , 2])).toThrow(TypeError)
    let deep: unknown[] = [1]
    for (let i = 0; i < 2000; i++) deep = [deep]
    expect(() => canonicalJson(deep)).toThrow(/deep/)
  })
})
