import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'
import { runNode } from './cli.js'
import { tempDir } from './tmp.js'

export type CrashPoint = { at: 'before-journal' } | { at: 'after-steps'; placed: number }

/**
 * Run `call` (a statement using `lib`, the module at `libPath`) in a child process that kills
 * itself with SIGKILL (a real crash: no catch, no finally) at a chosen point: just before the
 * checkout journal is written, or after the K-th rename into the workspace `dir` (each
 * journal step that places a file or a new directory is one).
 */
export async function runUntilCrash(libPath: string, dir: string, call: string, point: CrashPoint): Promise<void> {
  const script = join(tempDir('crasher'), 'crash.mjs')
  await fs.writeFile(script, crasher(call))
  const k = point.at === 'after-steps' ? point.placed : 0
  const r = await runNode([script, libPath, dir, point.at, String(k)], { cwd: dir })
  expect(r.stdout).not.toContain('finished without crashing')
  expect(r.code).not.toBe(0)
}

function crasher(call: string): string {
  return `
import fs, { promises } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
const [libPath, dir, mode, k] = process.argv.slice(2)
const rename = promises.rename
promises.rename = async (from, to) => {
  if (mode === 'before-journal' && String(to).endsWith('checkout-journal.json')) process.kill(process.pid, 'SIGKILL')
  return rename(from, to)
}
const renameSync = fs.renameSync
let placed = 0
fs.renameSync = (from, to) => {
  renameSync(from, to)
  if (mode === 'after-steps' && String(to).startsWith(dir + '/') && !String(to).startsWith(dir + '/.forkpoint/') && ++placed === Number(k)) {
    process.kill(process.pid, 'SIGKILL')
  }
}
syncBuiltinESMExports()
const lib = await import(libPath)
${call}
console.log('finished without crashing')
`
}
