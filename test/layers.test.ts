import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { ESLint } from 'eslint'
import tseslint from 'typescript-eslint'
import { afterAll, describe, expect, it } from 'vitest'
import { layersConfig, readLayers } from '../scripts/layers.mjs'

// `npm run lint` (part of `npm test`) holds src/ to docs/architecture.md's layer table.
const root = join(import.meta.dirname, '..')
const architecture = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8')

it("docs/architecture.md's table names every folder of src/, each once", () => {
  const layers = readLayers(architecture)
  const folders = readdirSync(join(root, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory())
  expect([...layers].sort()).toEqual(folders.map((e) => e.name).sort())
  expect(layers.slice(0, 2)).toEqual(['errors', 'util'])
  expect(layers.at(-1)).toBe('cli')
})

it("the project's ESLint config holds every source file of src/ to the layers", async () => {
  const eslint = new ESLint({ cwd: root })
  for (const file of ['src/store/Store.ts', 'src/ui/App.tsx', 'src/index.ts', 'src/cli/main.ts']) {
    const config = (await eslint.calculateConfigForFile(join(root, file))) as { rules: Record<string, unknown> }
    expect(config.rules['layers/imports-only-above'], file).toEqual([2])
  }
})

describe('the layer check on a tree of its own', () => {
  // a small project: its own table, its own src/, linted with the rule as the project's config builds it
  const tree = mkdtempSync(join(tmpdir(), 'forkpoint-layers-'))
  afterAll(() => rmSync(tree, { recursive: true, force: true }))
  const table = ['| layer | what |', '| --- | --- |', '| `errors/` | errors |', '| `store/` | objects |', '| `service/` | the process |', '| `cli/` | commands |']
  mkdirSync(join(tree, 'docs'))
  writeFileSync(join(tree, 'docs', 'architecture.md'), `# Architecture\n\n${table.join('\n')}\n`)

  async function lint(file: string, code: string): Promise<string[]> {
    const path = join(tree, file)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, code)
    const eslint = new ESLint({ cwd: tree, overrideConfigFile: true, overrideConfig: [{ languageOptions: { parser: tseslint.parser } }, layersConfig(tree)] })
    const [result] = await eslint.lintFiles([path])
    return result!.messages.map((m) => `${m.ruleId}: ${m.message}`)
  }

  it('passes imports of the layers above and of its own', async () => {
    const code = "import { a } from '../errors/a.js'\nimport { b } from './b.js'\nexport * from '../errors/c.js'\nimport('node:fs')\nimport { x } from 'zod'\n"
    expect(await lint('src/store/fine.ts', code)).toEqual([])
  })

  it('fails an import of a layer below, in each form an import takes', async () => {
    const upward = [
      "import { serve } from '../service/serve.js'",
      "import type { Options } from '../service/serve.js'",
      "export { serve } from '../service/serve.js'",
      "export * from '../cli/main.js'",
      "void import('../service/serve.js')",
      "export type T = import('../service/serve.js').Options",
    ]
    const messages = await lint('src/store/upward.ts', `${upward.join('\n')}\n`)
    expect(messages).toHaveLength(upward.length)
    expect(messages[0]).toBe("layers/imports-only-above: import of ../service/serve.js: service/ is below store/ in docs/architecture.md's layer table")
    expect(await lint('src/errors/deep/upward.ts', "import { s } from '../../store/s.js'\n")).toHaveLength(1)
  })

  it('lets only cli/ import the public API, and src/index.ts import every layer but cli/', async () => {
    expect(await lint('src/service/api.ts', "import { x } from '../index.js'\n")).toEqual([
      'layers/imports-only-above: import of ../index.js: only cli/ imports src/index.ts (the public API)',
    ])
    expect(await lint('src/cli/api.ts', "import { x } from '../index.js'\n")).toEqual([])
    expect(await lint('src/index.ts', "export * from './service/serve.js'\nexport * from './errors/a.js'\n")).toEqual([])
    expect(await lint('src/index.ts', "export * from './cli/main.js'\n")).toEqual([
      'layers/imports-only-above: import of ./cli/main.js: src/index.ts (the public API) imports no cli/: cli/ imports it',
    ])
  })

  it('fails a folder of src/ the table does not name, importing or imported', async () => {
    expect(await lint('src/extra/new.ts', 'export const n = 1\n')).toEqual(["layers/imports-only-above: src/extra/ is no layer of docs/architecture.md's table: add it there"])
    expect(await lint('src/cli/usesExtra.ts', "import { n } from '../extra/new.js'\n")).toEqual([
      "layers/imports-only-above: import of ../extra/new.js: src/extra/ is no layer of docs/architecture.md's table",
    ])
  })
})
