import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { initWorkspace, type JsonValue } from '../../src/index.js'
import { hashPayload, normalizeNfc } from '../../src/trace/core/stepHash.js'
import { jsonDiff } from '../../src/trace/diff/jsonDiff.js'
import { normalizeRun } from '../../src/trace/ci/normalizeRun.js'
import { Redactor } from '../../src/trace/redact/Redactor.js'
import { runArtifactText } from '../../src/trace/core/runArtifact.js'
import { JsonTooDeepError } from '../../src/errors/index.js'
import { canonicalJson } from '../../src/util/canonicalJson.js'
import { ciDiffCommand, ciNormalizeCommand, ciValidateCommand } from '../../src/cli/commands/ci.js'
import { tempDir } from '../helpers/tmp.js'
import { fp } from './cli.js'
import { makeRun } from './runFixtures.js'
import { callOperation, renderingOf } from '../helpers/callOperation.js'

const quiet = "console.log('agent ran')"
const plant = "require('node:fs').writeFileSync('pwned', 'x'); console.log('agent ran')"

describe('replay of a run from a file or another store', () => {
  it('runs the recorded command only when this store recorded it, or with --trust-command or -- CMD', async () => {
    const home = tempDir('untrusted-home')
    await initWorkspace({ dir: home })
    const rec = await fp(['run', '--record', '--json', '-o', 'mine.run.json', '--', process.execPath, '-e', quiet], { cwd: home })
    expect(rec.code, rec.stderr).toBe(0)
    expect((await fp(['replay', 'mine.run.json'], { cwd: home })).code).toBe(0)

    const hostile = JSON.parse(readFileSync(join(home, 'mine.run.json'), 'utf8'))
    hostile.meta.command = [process.execPath, '-e', plant]
    writeFileSync(join(home, 'edited.run.json'), JSON.stringify(hostile))
    const edited = await fp(['replay', 'edited.run.json'], { cwd: home })
    expect(edited.code).toBe(2)
    expect(existsSync(join(home, 'pwned'))).toBe(false)

    const other = tempDir('untrusted-other')
    await initWorkspace({ dir: other })
    writeFileSync(join(other, 'shared.run.json'), JSON.stringify(hostile))
    const refused = await fp(['replay', 'shared.run.json'], { cwd: other })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(
      /^forkpoint: run run-[0-9a-f]{20} was not recorded in this store, and replaying it would run its recorded command: .*writeFileSync.*--trust-command/,
    )
    expect(refused.stderr.split('\n').filter(Boolean)).toHaveLength(1)
    expect(existsSync(join(other, 'pwned'))).toBe(false)

    const own = await fp(['replay', 'shared.run.json', '--', process.execPath, '-e', quiet], { cwd: other })
    expect(own.code, own.stderr).toBe(0)
    expect(existsSync(join(other, 'pwned'))).toBe(false)
    const trusted = await fp(['replay', 'shared.run.json', '--trust-command'], { cwd: other })
    expect(trusted.code, trusted.stderr).toBe(0)
    expect(existsSync(join(other, 'pwned'))).toBe(true)
  })

  it('ci replay --artifact says what replaying the file would run and what that needs', async () => {
    const dir = tempDir('untrusted-ci')
    await initWorkspace({ dir })
    expect((await fp(['run', '--record', '-o', 'a.run.json', '--', process.execPath, '-e', quiet], { cwd: dir })).code).toBe(0)
    const text = await fp(['ci', 'replay', '--artifact', 'a.run.json'], { cwd: dir })
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toContain(`replaying it would run its recorded command ${process.execPath} -e `)
    expect(text.stdout).toContain('--trust-command')
    const json = JSON.parse((await fp(['ci', 'replay', '--artifact', 'a.run.json', '--json'], { cwd: dir })).stdout)
    expect(json.recordedCommand).toEqual([process.execPath, '-e', quiet])
  })
})

describe('deeply nested JSON', () => {
  const deepValue = (levels: number, bottom = 'bottom') => {
    let v: JsonValue = bottom
    for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v }
    return v
  }

  it('a 10,000-deep artifact is refused with exit 5 by every command that reads one', async () => {
    const dir = tempDir('deep')
    await initWorkspace({ dir })
    const good = runArtifactText(makeRun([['llm', 'plan', { q: 1 }, 'ok']]))
    writeFileSync(join(dir, 'good.run.json'), good)
    const deepText = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`
    writeFileSync(join(dir, 'deep.run.json'), JSON.stringify(JSON.parse(good)).replace('"input":{"q":1}', `"input":${deepText}`))
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['diff deep deep', () => callOperation('diff', { dir, a: 'deep.run.json', b: 'deep.run.json' })],
      ['diff good deep', () => callOperation('diff', { dir, a: 'good.run.json', b: 'deep.run.json' })],
      ['ci replay', () => ciValidateCommand({ dir, artifact: 'deep.run.json' })],
      ['ci diff', () => ciDiffCommand({ dir, expected: 'good.run.json', actual: 'deep.run.json' })],
      ['ci normalize', () => ciNormalizeCommand({ dir, input: 'deep.run.json', out: 'n.run.json' })],
      ['runs show', () => callOperation('runs_show', { dir, run: 'deep.run.json' })],
      ['replay', () => callOperation('replay', { dir, run: 'deep.run.json', command: [process.execPath, '-e', '1'] })],
    ]
    for (const [name, call] of calls)
      await expect(call(), name).rejects.toMatchObject({ exitCode: 5, message: expect.stringMatching(/deep\.run\.json is not a valid run: it nests deeper than 1000 levels$/) })
    const res = await fp(['ci', 'replay', '--artifact', 'deep.run.json'], { cwd: dir })
    expect(res.code, res.stderr).toBe(5)
    expect(res.stderr).toMatch(/^forkpoint: .*deep\.run\.json is not a valid run: it nests deeper than 1000 levels\n$/)
  })

  it('every recursive walk refuses a value nested past the limit with JsonTooDeepError (exit 5), not a stack overflow', () => {
    const deep = deepValue(10_000)
    const run = makeRun([['tool', 'deep', null, 'x']])
    run.steps[0]!.input = deep
    const walks: Array<[string, () => unknown]> = [
      ['jsonDiff', () => jsonDiff(deep, deepValue(10_000, 'other'))],
      ['canonicalJson', () => canonicalJson(deep)],
      ['hashPayload', () => hashPayload(deep)],
      ['normalizeNfc', () => normalizeNfc(deep)],
      ['normalizeRun', () => normalizeRun(run)],
      ['Redactor', () => new Redactor({ env: {} }).redact(deep)],
    ]
    for (const [name, walk] of walks) {
      let err: unknown
      try {
        walk()
      } catch (e) {
        err = e
      }
      expect(err, name).toBeInstanceOf(JsonTooDeepError)
      expect((err as JsonTooDeepError).exitCode, name).toBe(5)
    }
    expect(() => canonicalJson(deepValue(900))).not.toThrow()
  })
})

describe('control characters from a run', () => {
  it('diff and runs show print step names, ids and paths with escapes, never raw control characters', async () => {
    const dir = tempDir('ansi')
    const evil = '\u001b[2J\u001b[31mEVIL\u001b[0m\r\u202e\u0007'
    const a = makeRun([
      ['tool', evil, { [`k${evil}`]: 1 }, 'ok'],
      ['llm', 'plan', { q: 1 }, 'a'],
    ])
    const b = makeRun(
      [
        ['tool', evil, { [`k${evil}`]: 2 }, 'ok'],
        ['llm', 'plan', { q: 1 }, 'a'],
      ],
      'run-0000000000000000000b',
    )
    writeFileSync(join(dir, 'a.run.json'), runArtifactText(a))
    writeFileSync(join(dir, 'b.run.json'), runArtifactText(b))
    const diff = await fp(['diff', 'a.run.json', 'b.run.json'], { cwd: dir })
    expect(diff.code, diff.stderr).toBe(1)
    const show = await fp(['runs', 'show', 'a.run.json'], { cwd: dir })
    expect(show.code, show.stderr).toBe(0)
    for (const out of [diff.stdout, show.stdout]) {
      expect(out).toContain('\\x1b[2J\\x1b[31mEVIL\\x1b[0m\\r\\u202e\\x07')
      expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/)
    }
    const json = JSON.parse((await fp(['diff', 'a.run.json', 'b.run.json', '--json'], { cwd: dir })).stdout)
    expect(json.trace.contextA[0].name).toBe(evil)
  })
})

describe('one validation for every command that loads an artifact', () => {
  it('an empty runId or a stale step hash is refused with exit 5 by ci replay, replay, diff, runs show and ci diff; ci normalize rewrites the hashes', async () => {
    const dir = tempDir('validate-all')
    await initWorkspace({ dir })
    const good = JSON.parse(runArtifactText(makeRun([['llm', 'plan', { q: 1 }, 'ok']])))
    writeFileSync(join(dir, 'good.run.json'), JSON.stringify(good))
    writeFileSync(join(dir, 'noid.run.json'), JSON.stringify({ ...good, runId: '' }))
    const stale = structuredClone(good)
    stale.steps[0].input = { q: 2 }
    writeFileSync(join(dir, 'stale.run.json'), JSON.stringify(stale))
    const problems: Record<string, RegExp> = { 'noid.run.json': /runId "" is not a run id/, 'stale.run.json': /step 0 inputHash does not match its input/ }
    for (const [file, problem] of Object.entries(problems)) {
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['ci replay', () => ciValidateCommand({ dir, artifact: file })],
        ['replay', () => callOperation('replay', { dir, run: file, command: [process.execPath, '-e', '1'] })],
        ['diff good file', () => callOperation('diff', { dir, a: 'good.run.json', b: file })],
        ['diff file good', () => callOperation('diff', { dir, a: file, b: 'good.run.json' })],
        ['runs show', () => callOperation('runs_show', { dir, run: file })],
        ['ci diff', () => ciDiffCommand({ dir, expected: 'good.run.json', actual: file })],
      ]
      for (const [name, call] of calls) await expect(call(), `${name} ${file}`).rejects.toMatchObject({ exitCode: 5, message: expect.stringMatching(problem) })
      const res = await fp(['runs', 'show', file], { cwd: dir })
      expect(res.code, res.stderr).toBe(5)
      expect(res.stderr).toMatch(problem)
    }
    await ciNormalizeCommand({ dir, input: 'stale.run.json', out: 'fixed.run.json' })
    expect(await ciValidateCommand({ dir, artifact: 'fixed.run.json' })).toMatchObject({ artifact: join(dir, 'fixed.run.json') })
    expect(renderingOf('diff').exit!(await callOperation('diff', { dir, a: 'good.run.json', b: 'fixed.run.json' }))).toBe(1)
  })
})
