import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { expect, it } from 'vitest'
import { exitStatus } from '../../src/util/exitStatus.js'

async function statusOf(script: string): Promise<number> {
  const child = spawn('sh', ['-c', script], { stdio: 'ignore' })
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null]
  return exitStatus(code, signal)
}

it('is the exit code, or 128 + the number of the signal that ended the child, for any signal', async () => {
  expect(await statusOf('exit 3')).toBe(3)
  expect(await statusOf('kill -s TERM $$')).toBe(143)
  expect(await statusOf('kill -s KILL $$')).toBe(137)
  expect(await statusOf('kill -s USR1 $$')).toBe(138)
  expect(await statusOf('kill -s HUP $$')).toBe(129)
})
