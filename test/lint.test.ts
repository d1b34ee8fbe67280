import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ESLint } from 'eslint'
import { format, resolveConfig } from 'prettier'
import { expect, it } from 'vitest'

// `npm test` runs the linter and the formatter check; these check the wiring and that the
// configs are the project's (the full run over the tree is `npm run lint`, not repeated here).
const root = join(import.meta.dirname, '..')

it('npm test runs npm run lint, which runs ESLint and prettier --check', () => {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  expect(scripts['test']).toMatch(/npm run lint &&/)
  expect(scripts['lint']).toBe('eslint . && prettier --check .')
})

it("ESLint with the project's config reports an unused variable", async () => {
  const [result] = await new ESLint({ cwd: root }).lintText('const unused = 1\n', { filePath: join(root, 'scripts', 'lintProbe.mjs') })
  expect(result?.messages.map((m) => m.ruleId)).toEqual(['@typescript-eslint/no-unused-vars'])
})

it("Prettier with the project's config writes no semicolons, single quotes and long lines", async () => {
  const filepath = join(root, 'src', 'probe.ts')
  const options = { ...(await resolveConfig(filepath)), filepath }
  const line = `export const greeting = ${JSON.stringify('hello '.repeat(20))};\n`
  expect(await format(line, options)).toBe(`export const greeting = '${'hello '.repeat(20)}'\n`)
})
