import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BranchNotFoundError, Workspace } from '../../src/index.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { expectNothingLeft } from './conformanceSuite.js'

describe('withBranch and ending a branch by hand', () => {
  it('a manual commit inside withBranch lands once, and withBranch returns the value', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
    const value = await ws.withBranch('manual', async (b) => {
      await writeFile(join(b.path, 'a.txt'), 'committed by hand')
      const result = await b.commit()
      expect(result.written).toEqual(['a.txt'])
      return 42
    })
    expect(value).toBe(42)
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('committed by hand')
    expectNothingLeft(ws)
  })

  it('a manual abort inside withBranch keeps the workspace as it was and returns the value', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
    const value = await ws.withBranch('dropped', async (b) => {
      await writeFile(join(b.path, 'a.txt'), 'thrown away')
      await b.abort()
      return 'kept'
    })
    expect(value).toBe('kept')
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('a')
    expectNothingLeft(ws)
  })

  it('a throw after a manual commit: the commit stands, the error comes through', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
    const failure = ws.withBranch('then-throw', async (b) => {
      await writeFile(join(b.path, 'a.txt'), 'landed')
      await b.commit()
      throw new Error('the agent failed afterwards')
    })
    await expect(failure).rejects.toThrow('the agent failed afterwards')
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('landed')
  })

  it('ending a branch twice is a no-op: commit twice gives the first result, abort after either does nothing', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
    const b = await ws.branch('twice')
    await writeFile(join(b.path, 'a.txt'), 'once')
    const [first, concurrent] = await Promise.all([b.commit(), b.commit()])
    expect(concurrent).toBe(first)
    expect(await b.commit()).toBe(first)
    await b.abort()
    expect(b.status).toBe('committed')
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('once')

    const c = await ws.branch('aborted')
    await Promise.all([c.abort(), c.abort()])
    await c.abort()
    expect(c.status).toBe('aborted')
    // its changes are gone: a commit cannot claim to have applied them
    await expect(c.commit()).rejects.toBeInstanceOf(BranchNotFoundError)
    expectNothingLeft(ws)
  })
})
