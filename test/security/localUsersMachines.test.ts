// Adversary 3 of THREAT-MODEL.md, other local users, against root's machines: apart from localUsers.test.ts so the two run side by side.
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { bootMachine, serveMachineCdp } from '../../src/index.js'
import { sockets } from '../../src/machine/qemu/qemuProcess.js'
import { runProgram } from '../helpers/cli.js'
import { MACHINE_TIMEOUT, killAllMachines, machineWorkspace } from '../helpers/machines.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

describe.runIf(process.getuid?.() === 0)("another local user and root's machine with a network", { timeout: MACHINE_TIMEOUT }, () => {
  let dir: string | undefined
  afterAll(async () => {
    if (dir) await killAllMachines(dir)
  }, MACHINE_TIMEOUT)

  it("cannot attach to its console nor hand its network's host side a connection (its socket directory is QEMU's user's, 0700)", async () => {
    dir = await machineWorkspace('machine-net-local')
    const image = await sharedMachineImage(dir, 'busybox')
    const machine = await bootMachine({ dir, image, memoryMiB: 128, net: 'egress', allow: ['127.0.0.1:9'] })
    const socketDir = dirname(sockets(machine.id).qmp)
    for (const name of ['console.sock', 'egress.sock']) {
      const path = join(socketDir, name)
      expect(existsSync(path)).toBe(true)
      const tried = await runProgram(
        [
          'setpriv',
          '--reuid=nobody',
          '--regid=nogroup',
          '--clear-groups',
          process.execPath,
          '-e',
          `require('net').connect(${JSON.stringify(path)}).on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(0) })`,
        ],
        { cwd: '/' },
      )
      expect([name, tried.stdout.trim()]).toEqual([name, 'EACCES'])
    }
  })
})

describe.runIf(process.getuid?.() === 0)("another local user and a browser machine's DevTools endpoint (machine cdp)", { timeout: MACHINE_TIMEOUT * 3 }, () => {
  let dir: string | undefined
  afterAll(async () => {
    if (dir) await killAllMachines(dir)
  }, MACHINE_TIMEOUT)

  /** As nobody, ended after a minute: a request the endpoint let through to a Chromium not yet up would otherwise wait for it. */
  const NOBODY_FOR_A_MINUTE = ['timeout', '60', 'setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups']

  /** Node as nobody: `fetch` of the endpoint's `path` with `headers`, printing the status (or the error's code). */
  async function statusAsNobody(url: string, headers: Record<string, string>): Promise<string> {
    const script = `fetch(process.argv[1], { headers: JSON.parse(process.argv[2]) }).then((r) => console.log(r.status), (e) => console.log(e.cause?.code ?? e.message))`
    const r = await runProgram([...NOBODY_FOR_A_MINUTE, process.execPath, '-e', script, url, JSON.stringify(headers)], { cwd: '/' })
    return r.stdout.trim() || r.stderr.trim()
  }

  /** A WebSocket handshake as nobody, raw, with `headers` (name: value lines): the status line the endpoint answers with. */
  async function upgradeAsNobody(port: string, headers: string[]): Promise<string> {
    const request = [
      'GET /devtools/browser/x HTTP/1.1',
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Version: 13',
      ...headers,
      '',
      '',
    ].join('\r\n')
    const script = `const s = require('net').connect(Number(process.argv[1]), '127.0.0.1', () => s.write(process.argv[2])); s.on('data', (d) => { console.log(d.toString().split('\\r\\n')[0]); process.exit(0) }); s.on('error', (e) => console.log(e.code))`
    const r = await runProgram([...NOBODY_FOR_A_MINUTE, process.execPath, '-e', script, port, request], { cwd: '/' })
    return r.stdout.trim() || r.stderr.trim()
  }

  it('reaches neither its CDP socket nor, without the token, its own Host and no Origin, the loopback endpoint', async () => {
    dir = await machineWorkspace('machine-cdp-local')
    const image = await sharedMachineImage(dir, 'browser')
    const machine = await bootMachine({ dir, image, memoryMiB: 1024 })
    const cdpSock = join(dirname(sockets(machine.id).qmp), 'cdp.sock')
    expect(existsSync(cdpSock)).toBe(true)
    const connect = `require('net').connect(process.argv[1]).on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(0) })`
    const direct = await runProgram(['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, '-e', connect, cdpSock], { cwd: '/' })
    expect(direct.stdout.trim()).toBe('EACCES')

    const endpoint = await serveMachineCdp({ dir, machine: machine.id })
    try {
      const { port, hostname } = new URL(endpoint.url)
      expect(hostname).toBe('127.0.0.1') // loopback alone, never 0.0.0.0
      const bearer = { authorization: `Bearer ${endpoint.token}` }
      expect(await statusAsNobody(`${endpoint.url}/json/version`, {})).toBe('401')
      expect(await statusAsNobody(`${endpoint.url}/json/version`, { authorization: 'Bearer guessed' })).toBe('401')
      expect(await statusAsNobody(`${endpoint.url}/json/version`, { ...bearer, origin: 'http://evil.example' })).toBe('403')
      expect(await upgradeAsNobody(port, [`Host: 127.0.0.1:${port}`])).toBe('HTTP/1.1 401 Refused')
      expect(await upgradeAsNobody(port, [`Host: rebound.example:${port}`, `Authorization: Bearer ${endpoint.token}`])).toBe('HTTP/1.1 421 Refused')
      expect(await upgradeAsNobody(port, [`Host: 127.0.0.1:${port}`, `Authorization: Bearer ${endpoint.token}`, 'Origin: http://evil.example'])).toBe('HTTP/1.1 403 Refused')
    } finally {
      await endpoint.close()
    }
  })
})
