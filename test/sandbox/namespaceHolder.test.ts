import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { SandboxError } from '../../src/errors/index.js'
import { type SharedHolder, sharedHolder } from '../../src/sandbox/namespaceHolder.js'

const gone = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')
  } catch {
    return true
  }
}

async function kill(holder: SharedHolder): Promise<void> {
  process.kill(holder.id.pid, 'SIGKILL')
  while (!gone(holder.id.pid)) await new Promise((r) => setTimeout(r, 5))
}

/** Settles within `ms`, or fails the test instead of hanging it. */
const within = <T>(p: Promise<T>, ms = 30_000) => Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('never settled')), ms))])

describe('the shared namespace holder', () => {
  it('answers each of many requests sent at once with its own answer', async () => {
    const holder = await sharedHolder()
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => holder.request('u', `/nonexistent-${i}`)))
    results.forEach((r, i) => expect(r).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining(`/nonexistent-${i}:`) } }))
  })

  it('refuses requests sent after it died with a SandboxError (no EPIPE, no hang), and a new one is started', async () => {
    const holder = await sharedHolder()
    await kill(holder)
    for (let i = 0; i < 600 && (await sharedHolder()) === holder; i++) await new Promise((r) => setTimeout(r, 50)) // its exit seen by this process
    await expect(within(holder.request('u', '/x'))).rejects.toBeInstanceOf(SandboxError)
    const next = await sharedHolder()
    expect(next.id.pid).not.toBe(holder.id.pid)
    await expect(within(next.request('u', '/nonexistent'))).rejects.toThrow(/cannot unmount \/nonexistent/)
  })
})

it('keeps the answer to a request about a path with newlines and separators in its own frame', async () => {
  const holder = await sharedHolder()
  const [odd, next] = await Promise.allSettled([holder.request('u', '/nonexistent\n0 ok \0x'), holder.request('u', '/also-nonexistent')])
  expect(odd).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('/nonexistent\n0 ok ') } })
  expect(next).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('/also-nonexistent') } })
})
