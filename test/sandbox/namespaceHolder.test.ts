import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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

const files = () => {
  const dir = mkdtempSync(join(tmpdir(), 'holder-test-'))
  return { stdin: '', stdout: join(dir, 'out'), stderr: join(dir, 'err'), ready: join(dir, 'ready') }
}

/** Settles within `ms`, or fails the test instead of hanging it. */
const within = <T>(p: Promise<T>, ms = 5000) => Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('never settled')), ms))])

describe('the shared namespace holder', () => {
  it('answers each of many requests sent at once with its own answer', async () => {
    const holder = await sharedHolder()
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => holder.request('u', `/nonexistent-${i}`)))
    results.forEach((r, i) => expect(r).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining(`/nonexistent-${i}:`) } }))
  })

  it('settles a running sandbox with a SandboxError when it dies', async () => {
    const holder = await sharedHolder()
    const run = holder.run(files(), ['sleep', '100'], process.env)
    await within(run.pid)
    await kill(holder)
    await new Promise((r) => setTimeout(r, 200)) // its exit seen before anyone awaits `exit`: no unhandled rejection meanwhile
    await expect(within(run.exit)).rejects.toBeInstanceOf(SandboxError)
  })

  it('refuses requests sent after it died with a SandboxError (no EPIPE, no hang), and a new one is started', async () => {
    const holder = await sharedHolder()
    await kill(holder)
    await new Promise((r) => setTimeout(r, 50)) // its exit seen by this process
    await expect(within(holder.request('u', '/x'))).rejects.toBeInstanceOf(SandboxError)
    await expect(within(holder.run(files(), ['true'], process.env).exit)).rejects.toBeInstanceOf(SandboxError)
    const next = await sharedHolder()
    expect(next.id.pid).not.toBe(holder.id.pid)
    const run = next.run(files(), ['true'], process.env)
    expect(await within(run.exit)).toEqual({ code: 0, signal: 0 })
  })
})

it('passes every argument, empty ones at the end too', async () => {
  const holder = await sharedHolder()
  const f = files()
  const run = holder.run(f, ['perl', '-e', 'print join("|", map { "<$_>" } @ARGV)', 'a', '', 'b c', ''], process.env)
  expect(await within(run.exit)).toEqual({ code: 0, signal: 0 })
  expect(readFileSync(f.stdout, 'utf8')).toBe('<a>|<>|<b c>|<>')
})

it('keeps the answer to a request about a path with newlines on one line', async () => {
  const holder = await sharedHolder()
  const [odd, next] = await Promise.allSettled([holder.request('u', '/nonexistent\n0 ok '), holder.request('u', '/also-nonexistent')])
  expect(odd).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('/nonexistent 0 ok :') } })
  expect(next).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('/also-nonexistent') } })
})
