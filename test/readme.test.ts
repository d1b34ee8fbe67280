import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from './helpers/cli.js'
import { tempDir } from './helpers/tmp.js'

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const blocks = [...readme.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }))
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }

describe('README', () => {
  it('has only TypeScript blocks and the Quick start, whose commands are the package scripts that exist', () => {
    expect(blocks.filter((b) => b.lang !== 'ts').map((b) => b.lang)).toEqual(['sh'])
    const quickStart = blocks.find((b) => b.lang === 'sh')!.code
    const commands = quickStart
      .split('\n')
      .filter(Boolean)
      .map((line) => line.replace(/\s+#.*$/, ''))
    expect(commands).toEqual(['npm run setup && npm run demo', 'npm run setup && npm test'])
    for (const script of ['setup', 'demo', 'test']) expect(packageJson.scripts[script]).toBeTruthy()
    expect(readFileSync(join(ROOT, '.ci', 'run'), 'utf8')).toContain('npm run setup && npm test')
  })

  // Each block runs as a user's own file would, importing 'forkpoint' (the package resolves itself from inside it).
  const dir = join(ROOT, '.scratch', 'readme')
  for (const [i, block] of blocks.filter((b) => b.lang === 'ts').entries()) {
    it(`runs TypeScript block ${i + 1} on Node ${process.versions.node.split('.')[0]}`, () => {
      mkdirSync(dir, { recursive: true })
      const file = join(dir, `block-${i + 1}.mts`)
      writeFileSync(file, block.code)
      try {
        // its temporary directories in one of the test's own, removed with it
        const env = { ...process.env, TMPDIR: tempDir('readme-block') }
        const run = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env, encoding: 'utf8', timeout: 300_000 })
        expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' })
      } finally {
        rmSync(file, { force: true })
      }
    })
  }
})
