import { spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { expect, it } from 'vitest'
import { encodeMessage } from '../../src/sandbox/messages.js'
import { runtimeBinary } from '../../src/sandbox/runtimeBinary.js'
import { makeWorkspace } from '../helpers/tmp.js'

/** Processes whose command line starts with the runtime's path (its helpers included: they are forks). */
const runtimes = (): number[] =>
  readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith(`${runtimeBinary()}\0run`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${p}/status`, 'utf8'))
      } catch {
        return false
      }
    })
    .map(Number)

it('leaves no process behind when the runtime is killed at any point of its setup', async () => {
  const ws = await makeWorkspace({ 'a.txt': 'a' })
  const before = new Set(runtimes())
  for (let i = 0; i < 40; i++) {
    const child = spawn(runtimeBinary(), ['run'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] })
    const control = child.stdio[3] as NodeJS.WritableStream & { on(e: string, f: () => void): void }
    control.on('error', () => undefined)
    control.write(
      encodeMessage([
        ['view', ws],
        ['workspace', ws],
        ['env', `PATH=${process.env['PATH']}`],
        ['argv', 'sleep'],
        ['argv', '1000'],
      ]),
    )
    await new Promise((r) => setTimeout(r, i % 10))
    child.kill('SIGKILL')
    await new Promise((r) => child.once('close', r))
  }
  let left = runtimes().filter((p) => !before.has(p))
  for (let i = 0; i < 600 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 50))
    left = runtimes().filter((p) => !before.has(p))
  }
  expect(left).toEqual([])
})
