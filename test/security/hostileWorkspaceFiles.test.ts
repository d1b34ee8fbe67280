import { mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MAX_IGNORE_FILE_BYTES } from '../../src/world/scan/ignoreRules.js'
import { fpInProcess } from '../helpers/cli.js'
import { fpAsNobody, giveToNobody } from '../helpers/privilegedModes.js'
import { storeWorkspace } from '../helpers/workspace.js'

/**
 * Files a cloned repository carries into the workspace and forkpoint reads as configuration: ignore files and
 * `.claude/settings.json`. Each is bounded before it is read; one that is not what it must be is refused with a
 * clear exit code, never read until memory ends (exit 6, or killed).
 */
const users = process.getuid?.() === 0 ? (['root', 'nobody'] as const) : (['root'] as const)

describe.each(users)("a cloned repository's configuration files (as %s)", (user) => {
  const fp = (dir: string, ...args: string[]) => {
    if (user === 'root') return fpInProcess(dir, ...args)
    giveToNobody(dir)
    return fpAsNobody(dir, ...args)
  }

  it('refuses an ignore file over the cap (exit 5) before reading it: status and snapshot', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n', 'sub/.forkpointignore': '*.log\n' })
    truncateSync(join(dir, 'sub', '.forkpointignore'), 2 * 1024 ** 3) // sparse: 2 GiB claimed, nothing written
    for (const command of ['status', 'snapshot']) {
      const run = await fp(dir, command)
      expect([run.code, run.stderr]).toEqual([5, expect.stringMatching(new RegExp(`is 2147483648 bytes, more than the ${MAX_IGNORE_FILE_BYTES} an ignore file may hold`))])
    }
  })

  it('refuses a .claude/settings.json that is a directory, nests without end or is huge (exit 2), changing nothing', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const settings = join(dir, '.claude', 'settings.json')
    mkdirSync(settings, { recursive: true })
    const asDirectory = await fp(dir, 'claude', 'install')
    expect([asDirectory.code, asDirectory.stderr]).toEqual([2, expect.stringMatching(/settings\.json is not a regular file/)])
    const cases: Array<[string, (file: string) => void]> = [
      ['nests deeper than', (file) => writeFileSync(file, `{"hooks":{"PreToolUse":[{"hooks":${'['.repeat(100_000)}`)],
      ['is 629145600 bytes, more than the', (file) => truncateSync(file, 600 * 1024 ** 2)],
    ]
    for (const [message, make] of cases) {
      const { dir: other } = await storeWorkspace({ 'a.txt': 'a\n' })
      const file = join(other, '.claude', 'settings.json')
      mkdirSync(join(other, '.claude'))
      writeFileSync(file, '')
      make(file)
      const before = readFileSync(file).subarray(0, 64)
      const run = await fp(other, 'claude', 'install')
      expect([run.code, run.stderr]).toEqual([2, expect.stringMatching(new RegExp(`settings\\.json ${message}`))])
      expect(readFileSync(file).subarray(0, 64)).toEqual(before)
    }
  })
})
