import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { fp, fpJson, runCli } from '../helpers/cli.js'
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

it('-C with a relative DIR names DIR once: `-C sub init` makes sub/.forkpoint, not sub/sub/.forkpoint', async () => {
  const parent = await makeWorkspace({ 'sub/a.txt': 'a' })
  const init = await fpJson(parent, '-C', 'sub', 'init')
  expect(init.json).toMatchObject({ storeDir: join(parent, 'sub', '.forkpoint'), workspace: join(parent, 'sub') })
  expect(existsSync(join(parent, 'sub', 'sub'))).toBe(false)
})

it('FORKPOINT_STORE names the store as --store does, and --store wins over it', async () => {
  const ws = await makeWorkspace({ 'a.txt': 'a' })
  const fromEnv = join(tempDir('store'), 'store')
  const fromFlag = join(tempDir('store'), 'store')
  const env = { FORKPOINT_STORE: fromEnv }
  const init = await runCli(['init', '--json'], { cwd: ws, env })
  expect(init.code, init.stderr).toBe(0)
  expect((JSON.parse(init.stdout) as { storeDir: string }).storeDir).toBe(fromEnv)
  expect((await runCli(['snapshot', '-m', 'one'], { cwd: ws, env })).code).toBe(0)
  const status = await runCli(['status', '--json'], { cwd: ws, env })
  expect((JSON.parse(status.stdout) as { head: string | null }).head).not.toBeNull()
  expect(existsSync(join(ws, '.forkpoint'))).toBe(false)
  expect((await runCli(['init', '--store', fromFlag], { cwd: ws, env })).code).toBe(0)
  expect(existsSync(join(fromFlag, 'HEAD'))).toBe(true)
})
