import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { initWorkspace } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'
import { fp } from './cli.js'

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
    expect(refused.stderr).toMatch(/^forkpoint: run run-[0-9a-f]{20} was not recorded in this store, and replaying it would run its recorded command: .*writeFileSync.*--trust-command/)
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
