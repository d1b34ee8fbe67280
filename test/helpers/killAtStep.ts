import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { CLI } from './cli.js'
import { tempDir } from './tmp.js'
import { pollFor } from './until.js'

/**
 * Run `forkpoint ARGS` in `dir` and kill it with SIGKILL (a real crash: no catch, no finally)
 * once it is paused at the named step (`STEP` or `STEP#N`: FORKPOINT_TEST_PAUSE_AT), or,
 * with `reached`, once that says so (a request the service holds in flight).
 */
export async function killedAt(dir: string, args: string[], at: { step: string } | { reached: () => boolean; what: string }): Promise<void> {
  const pauseFile = join(tempDir('pause'), 'paused')
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'], HOME: process.env['HOME'], NO_COLOR: '1' }
  if ('step' in at) Object.assign(env, { FORKPOINT_TEST_PAUSE_AT: at.step, FORKPOINT_TEST_PAUSE_FILE: pauseFile })
  const what = 'step' in at ? at.step : at.what
  const child = spawn(CLI, args, { cwd: dir, env, stdio: 'ignore' })
  let ended: number | null | undefined
  const exited = new Promise<void>((resolve) => child.on('exit', (code) => resolve(void (ended = code))))
  try {
    await pollFor(`forkpoint ${args.join(' ')} to reach ${what}`, () => {
      if (ended !== undefined) throw new Error(`forkpoint ${args.join(' ')} exited (${ended}) before ${what}`)
      return ('step' in at ? existsSync(pauseFile) : at.reached()) || undefined
    })
  } finally {
    child.kill('SIGKILL')
    await exited
  }
}
