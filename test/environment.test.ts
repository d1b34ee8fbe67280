import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { ESLint } from 'eslint'
import tseslint from 'typescript-eslint'
import { afterAll, describe, expect, it } from 'vitest'
import { environmentConfig, readEnvironmentPlaces } from '../scripts/environment.mjs'

// `npm run lint` (part of `npm test`) lets only the places docs/configuration.md lists read process.env.
const root = join(import.meta.dirname, '..')
const places = readEnvironmentPlaces(readFileSync(join(root, 'docs', 'configuration.md'), 'utf8'))

it("docs/configuration.md's places exist, and each listed file still reads the environment", () => {
  expect(places).toContain('src/cli/')
  for (const place of places) {
    expect(existsSync(join(root, place)), place).toBe(true)
    if (place.endsWith('/')) expect(statSync(join(root, place)).isDirectory(), place).toBe(true)
    else expect(readFileSync(join(root, place), 'utf8'), place).toContain('process.env')
  }
})

it("the project's ESLint config holds library files to the rule and spares the listed places", async () => {
  const eslint = new ESLint({ cwd: root })
  const ruleOf = async (file: string) => ((await eslint.calculateConfigForFile(join(root, file))) as { rules: Record<string, unknown> }).rules['environment/read-at-the-edge']
  for (const file of ['src/store/Store.ts', 'src/ui/App.tsx', 'src/index.ts', 'src/service/httpService.ts']) expect(await ruleOf(file), file).toEqual([2, 'reads'])
  for (const file of ['src/cli/main.ts', 'src/cli/commands/serve.ts', 'src/trace/record/installFromEnv.ts', 'src/image/forkImage.ts'])
    expect(await ruleOf(file), file).toBeUndefined()
  for (const file of ['src/machine/image/cacheDir.ts', 'src/sandbox/runSandboxed.ts']) expect(await ruleOf(file), file).toEqual([2, 'defaults'])
})

describe('the environment check on a tree of its own', () => {
  // a small project: its own list, its own src/, linted with the rule as the project's config builds it
  const tree = mkdtempSync(join(tmpdir(), 'forkpoint-environment-'))
  afterAll(() => rmSync(tree, { recursive: true, force: true }))
  const table = [
    '| place | kind | why |',
    '| --- | --- | --- |',
    '| `src/cli/` | edge | the command line |',
    '| `src/trace/entry.ts` | child entry | what its parent set |',
    "| `src/sandbox/spawn.ts` | child environment | a command's environment: the caller's |",
  ]
  mkdirSync(join(tree, 'docs'))
  writeFileSync(join(tree, 'docs', 'configuration.md'), `# Configuration\n\n| variable | what |\n| --- | --- |\n| \`FORKPOINT_X\` | x |\n\n${table.join('\n')}\n`)

  async function lint(file: string, code: string): Promise<string[]> {
    const path = join(tree, file)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, code)
    const eslint = new ESLint({
      cwd: tree,
      overrideConfigFile: true,
      overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...environmentConfig(tree)],
    })
    const [result] = await eslint.lintFiles([path])
    return result!.messages.map((m) => `${m.ruleId}: ${m.message}`)
  }

  it('reads the places of the table, not its other rows', () => {
    expect(readEnvironmentPlaces(readFileSync(join(tree, 'docs', 'configuration.md'), 'utf8'))).toEqual(['src/cli/', 'src/trace/entry.ts', 'src/sandbox/spawn.ts'])
  })

  it('fails a library file that reads the environment, in each form a read takes', async () => {
    const reads = [
      "export const a = process.env['FORKPOINT_STORE']",
      'export const b = process.env.FORKPOINT_KEY',
      'export function c(env = process.env) { return env }',
      "export const d = process['env']",
      'export const e = globalThis.process.env',
      'const { env } = process\nexport const f = env',
      "import { env as g } from 'node:process'\nexport { g }",
    ]
    const messages = await lint('src/store/reads.ts', `${reads.join('\n')}\n`)
    expect(messages).toHaveLength(reads.length)
    expect(messages[0]).toBe(
      'environment/read-at-the-edge: process.env is read at the edge: take the value as an option, or list this file in docs/configuration.md ("Where the environment is read") with why',
    )
  })

  it('passes a library file that takes its configuration as options, and the places the table lists', async () => {
    expect(await lint('src/store/options.ts', 'export function f({ store }: { store?: string }) { return store ?? process.cwd() }\nexport const env = { a: 1 }.a\n')).toEqual([])
    expect(await lint('src/cli/deep/main.ts', "export const store = process.env['FORKPOINT_STORE']\n")).toEqual([])
    expect(await lint('src/trace/entry.ts', "export const journal = process.env['FORKPOINT_TRACE_JOURNAL']\n")).toEqual([])
    expect(await lint('src/trace/other.ts', "export const journal = process.env['FORKPOINT_TRACE_JOURNAL']\n")).toHaveLength(1)
  })

  it('fails an `env` defaulting to process.env in a listed place that does not configure from it, and no other read there', async () => {
    const defaults = [
      'export function a(env = process.env) { return env }',
      'export function b({ env = process.env }: { env?: NodeJS.ProcessEnv }) { return env }',
      'export const c = (env?: NodeJS.ProcessEnv) => env ?? process.env',
      'export const d = (env?: NodeJS.ProcessEnv) => env || process.env',
    ]
    const messages = await lint('src/sandbox/spawn.ts', `${defaults.join('\n')}\n`)
    expect(messages).toHaveLength(defaults.length)
    expect(messages[0]).toBe(
      'environment/read-at-the-edge: an `env` defaulting to process.env reads the environment below the edge: take it as a required option, passed down from the edge (docs/configuration.md, "Where the environment is read")',
    )
    expect(await lint('src/sandbox/spawn.ts', "export const env = (extra: object) => ({ ...process.env, ...extra, PATH: process.env['PATH'] })\n")).toEqual([])
    expect(await lint('src/trace/entry.ts', 'export function install(env = process.env) { return env }\n')).toEqual([])
    expect(await lint('src/cli/main.ts', 'export const run = (env?: NodeJS.ProcessEnv) => env ?? process.env\n')).toEqual([])
  })
})
