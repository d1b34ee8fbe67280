import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fp } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'

/** The user's bad input: one line naming it, exit 2, no stack; under --json that line is the error's JSON. */
describe('usage errors exit 2 with one clear line', () => {
  const cases: Array<{ what: string; args: (ws: string) => string[]; names: RegExp }> = [
    { what: 'a missing -C directory', args: (ws) => ['-C', join(ws, 'nowhere'), 'status'], names: /-C .*nowhere: no such directory/ },
    { what: 'a missing pack file', args: (ws) => ['unpack', join(ws, 'missing.fpk')], names: /missing\.fpk: no such file/ },
    { what: 'an unknown subcommand', args: () => ['frobnicate'], names: /unknown command 'frobnicate'/ },
    { what: 'an unknown subcommand of a group', args: () => ['ci', 'frobnicate'], names: /unknown command 'frobnicate'/ },
    { what: 'a group without its subcommand', args: () => ['ci'], names: /'forkpoint ci' needs a subcommand: record, check/ },
    { what: 'no command at all', args: () => [], names: /a command is needed/ },
    { what: 'an unknown option', args: () => ['status', '--bogus'], names: /unknown option '--bogus'/ },
    { what: 'a missing argument', args: () => ['unpack'], names: /missing required argument/ },
  ]

  for (const { what, args, names } of cases) {
    it(`${what}: one line, exit 2; as JSON under --json`, async () => {
      const ws = tempDir('usage')
      expect((await fp(ws, 'init')).code).toBe(0)
      const human = await fp(ws, ...args(ws))
      expect(human.code, human.stderr).toBe(2)
      expect(human.stderr.trim().split('\n'), human.stderr).toHaveLength(1)
      expect(human.stderr).toMatch(/^forkpoint: /)
      expect(human.stderr).toMatch(names)
      expect(human.stderr).not.toMatch(/internal error|\n\s+at /)

      const json = await fp(ws, ...args(ws), '--json')
      expect(json.code, json.stderr).toBe(2)
      expect(json.stdout).toBe('')
      const lines = json.stderr.trim().split('\n')
      expect(lines, json.stderr).toHaveLength(1)
      const parsed = JSON.parse(lines[0]!) as { error: { code: string; exitCode: number; message: string } }
      expect(parsed.error).toMatchObject({ exitCode: 2 })
      expect(parsed.error.message).toMatch(names)
    })
  }

  it('--help and --version still exit 0', async () => {
    const ws = tempDir('usage')
    const help = await fp(ws, '--help')
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/Usage: forkpoint/)
    expect((await fp(ws, '--version')).code).toBe(0)
    expect((await fp(ws, 'ci', '--help')).code).toBe(0)
  })
})
