import { spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { createServer } from 'node:tls'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI, runCli } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { type TestCa, type TlsRegistry, makeTestCa, nonLoopbackAddress, startTlsRegistry } from '../helpers/tlsRegistry.js'

const ip = nonLoopbackAddress()

/** Live processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker) && !readFileSync(`/proc/${p}/stat`, 'utf8').includes(') Z ')
      } catch {
        return false
      }
    })
    .map(Number)
}

async function eventually(cond: () => boolean, ms = 30_000): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) if (cond()) return true
  return cond()
}

describe.skipIf(ip === undefined)('HTTPS behind a CA that only NODE_EXTRA_CA_CERTS names', () => {
  let ca: TestCa
  let registry: TlsRegistry
  beforeAll(async () => {
    const dir = tempDir('tls-registry')
    ca = makeTestCa(join(dir, 'ca'), ip!)
    registry = await startTlsRegistry({ dir, ip: ip!, ca })
  })
  afterAll(async () => {
    await registry?.stop()
  })

  it('push and pull work with it, and are refused without it', async () => {
    const ws = await makeWorkspace({ 'a.txt': 'over https\n' })
    const certs = { NODE_EXTRA_CA_CERTS: ca.caFile }
    const remote = `oci://${registry.host}/team/tls:v1`
    expect((await runCli(['init'], { cwd: ws })).code).toBe(0)
    expect((await runCli(['snapshot', '-m', 'one'], { cwd: ws })).code).toBe(0)

    const refused = await runCli(['push', 'HEAD', remote], { cwd: ws })
    expect(refused.code, refused.stderr).not.toBe(0)
    expect(refused.stderr.trim().split('\n'), refused.stderr).toHaveLength(1)

    const pushed = await runCli(['push', 'HEAD', remote], { cwd: ws, env: certs })
    expect(pushed.code, pushed.stderr).toBe(0)
    const other = tempDir('tls-pull')
    expect((await runCli(['init'], { cwd: other })).code).toBe(0)
    const pulled = await runCli(['pull', remote], { cwd: other, env: certs })
    expect(pulled.code, pulled.stderr).toBe(0)
    const cloned = await runCli(['clone', remote, '--into', join(other, 'copy')], { cwd: other, env: certs })
    expect(cloned.code, cloned.stderr).toBe(0)
    expect(readFileSync(join(other, 'copy', 'a.txt'), 'utf8')).toBe('over https\n')
  })

  it('kill -9 of a pull leaves no forkpoint process behind', async () => {
    // a registry that takes the connection and never answers: the pull is under way until killed
    let connected = false
    const server = createServer({ cert: readFileSync(ca.certFile), key: readFileSync(ca.keyFile) }, () => {
      connected = true
    })
    await new Promise<void>((r) => server.listen(0, ip, r))
    const { port } = server.address() as { port: number }
    try {
      const ws = await makeWorkspace({ 'a.txt': 'a' })
      expect((await runCli(['init'], { cwd: ws })).code).toBe(0)
      const marker = `team/killed${process.pid}`
      const pull = spawn(CLI, ['pull', `oci://${ip}:${port}/${marker}:v1`], {
        cwd: ws,
        env: { PATH: process.env['PATH'], HOME: process.env['HOME'], NODE_EXTRA_CA_CERTS: ca.caFile },
        stdio: 'ignore',
      })
      expect(await eventually(() => connected)).toBe(true)
      const exited = new Promise((r) => pull.once('exit', r))
      pull.kill('SIGKILL')
      await exited
      expect(await eventually(() => processesWith(marker).length === 0)).toBe(true)
    } finally {
      server.close()
    }
  })
})
