import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { fp } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

it('-C DIR works as if started in DIR: relative paths on the line resolve there', async () => {
  const ws = await makeWorkspace({ 'a.txt': 'a' })
  const elsewhere = tempDir('cwd')
  expect((await fp(elsewhere, '-C', ws, 'init')).code).toBe(0)
  expect((await fp(elsewhere, '-C', ws, 'snapshot', '-m', 'one')).code).toBe(0)
  const out = await fp(elsewhere, '-C', ws, 'checkout', 'HEAD', '--into', 'restored')
  expect(out.code, out.stderr).toBe(0)
  expect(existsSync(join(ws, 'restored', 'a.txt'))).toBe(true)
  expect(existsSync(join(elsewhere, 'restored'))).toBe(false)
})
