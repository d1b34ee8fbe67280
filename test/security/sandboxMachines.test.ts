import { chownSync, existsSync, readFileSync, readlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Digest, bootMachine, buildMachineImage, forkMachine, snapshotMachine } from '../../src/index.js'
import { sockets } from '../../src/machine/qemu/qemuProcess.js'
import { withQmp } from '../../src/machine/qemu/qemuSteps.js'
import { qemuUser } from '../../src/machine/qemu/qemuUser.js'
import { CLI, type CliResult, runProgram } from '../helpers/cli.js'
import { KERNEL_CACHE, MACHINE_TIMEOUT, execOrHang, killAllMachines, machineWorkspace, processAlive } from '../helpers/machines.js'
import { tempDir } from '../helpers/tmp.js'
import { pollFor } from '../helpers/until.js'

// Sandboxed code in machines (QEMU's own confinement, a guest's network): apart from sandboxCode.test.ts so the two run side by side.
describe.runIf(process.getuid?.() === 0)("root's machines: once QEMU runs a guest or loads a state it is no host root", { timeout: MACHINE_TIMEOUT }, () => {
  let dir: string
  let image: Digest
  beforeAll(async () => {
    dir = await machineWorkspace('security-qemu')
    image = (await buildMachineImage({ dir, recipe: 'busybox' })).image
  }, MACHINE_TIMEOUT)
  afterAll(async () => {
    if (dir) await killAllMachines(dir)
  }, MACHINE_TIMEOUT)

  /** A /proc/PID/status field. */
  const field = (pid: number, name: string) => new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]

  it('a booted machine and a child forked from its snapshot: an unprivileged user of their own, no capabilities, no_new_privs, a seccomp filter, namespaces of their own', async () => {
    const parent = await bootMachine({ dir, image })
    const snap = await snapshotMachine({ dir, machine: parent.id })
    const [child] = await forkMachine({ dir, image: snap.image, n: 1 })
    const { uid, gid } = qemuUser()!
    expect(uid).toBeGreaterThanOrEqual(65536) // no account's, no sandbox's
    for (const m of [parent, child!]) {
      expect(field(m.pid, 'Uid')!.split(/\s+/).map(Number)).toEqual([uid, uid, uid, uid])
      expect(field(m.pid, 'Gid')!.split(/\s+/).map(Number)).toEqual([gid, gid, gid, gid])
      expect(field(m.pid, 'Groups')!.trim()).toBe(String(gid))
      expect([field(m.pid, 'CapEff'), field(m.pid, 'CapPrm')]).toEqual(['0000000000000000', '0000000000000000'])
      expect([field(m.pid, 'NoNewPrivs'), field(m.pid, 'Seccomp')]).toEqual(['1', '2'])
      for (const ns of ['net', 'pid', 'mnt']) expect(readlinkSync(`/proc/${m.pid}/ns/${ns}`), ns).not.toBe(readlinkSync(`/proc/self/ns/${ns}`))
    }
    expect((await execOrHang({ dir, machine: child!.id, command: 'echo alive' })).stdout).toBe('alive\n')
  })

  it('QEMU starts no program: a migration to an exec: command ends it (its filter kills it) rather than run the command', async () => {
    const machine = await bootMachine({ dir, image })
    const marker = join(tempDir('qemu-spawn'), 'ran')
    await withQmp(sockets(machine.id).qmp, machine.id, (qmp) => qmp.execute('migrate', { uri: `exec:touch ${marker}` })).catch(() => undefined)
    await pollFor('QEMU to end', () => (processAlive(machine.pid) ? undefined : true))
    expect(existsSync(marker)).toBe(false)
  })
})

describe.runIf(process.getuid?.() === 0)(
  'machine networking: a hostile guest, or a guest that took QEMU over, reaches only what it was allowed',
  { timeout: MACHINE_TIMEOUT * 2 },
  () => {
    const heard: string[] = []
    let allowedPort = 0
    let otherPort = 0
    let closeAll = () => undefined as void
    /** Each machine started, and as whom: it is killed as that user (root's library calls cannot open nobody's store). */
    const started: Array<{ as: 'root' | 'nobody'; dir: string; machine: string }> = []
    beforeAll(async () => {
      const { createServer } = await import('node:net')
      const listening = (label: string, host: string) =>
        new Promise<number>((resolve) => {
          const server = createServer((c) => c.on('data', (d: Buffer) => heard.push(`${label} ${d.toString().split('\r\n')[0]}`)).on('error', () => undefined))
          server.listen(0, host, () => resolve((server.address() as { port: number }).port))
          const close = closeAll
          closeAll = () => void (close(), server.close())
        })
      allowedPort = await listening('allowed', '127.0.0.1')
      otherPort = await listening('other', '0.0.0.0') // on every host address: the guest must reach it through none
      await buildMachineImage({ dir: await machineWorkspace('machine-net-kernel'), recipe: 'busybox' }) // the kernel fetched as root, before nobody needs it
    }, MACHINE_TIMEOUT)
    afterAll(async () => {
      closeAll()
      for (const { as, dir, machine } of started) await cli(as, dir, 'machine', 'kill', machine)
    }, MACHINE_TIMEOUT)

    /** The CLI as `as`, with the suite's kernel cache. */
    const cli = (as: 'root' | 'nobody', cwd: string, ...args: string[]): Promise<CliResult> => {
      const env = [`HOME=${cwd}`, `PATH=${process.env['PATH']}`, 'NO_COLOR=1', `XDG_CACHE_HOME=${KERNEL_CACHE}`]
      const argv = as === 'root' ? ['env', ...env, CLI, ...args] : ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', 'env', ...env, CLI, ...args]
      return runProgram(argv, { cwd })
    }

    /** The host's addresses a guest might try for its services: its loopback as the guest names it, and each IPv4 address of its own. */
    const hostAddresses = async () => {
      const { networkInterfaces } = await import('node:os')
      const own = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).filter((a) => a.family === 'IPv4' && !a.internal).map((a) => a.address))
      return ['10.0.2.2', ...own]
    }

    /** Whether the listening socket of `port` on the host is bound to 127.0.0.1 only (/proc/net/tcp: local address, state 0A). */
    const listeners = (port: number) =>
      readFileSync('/proc/net/tcp', 'utf8')
        .split('\n')
        .map((line) => line.trim().split(/\s+/))
        .filter((f) => f[3] === '0A' && f[1]?.endsWith(`:${port.toString(16).toUpperCase().padStart(4, '0')}`))
        .map((f) => f[1]!.split(':')[0])

    for (const as of ['root', 'nobody'] as const)
      it(`as ${as}: no host service but the allowed one, whatever address or port the guest tries; the relay's socket refuses other destinations; a published port is on 127.0.0.1 only`, async () => {
        heard.splice(0)
        const dir = tempDir(`machine-net-${as}`)
        if (as === 'nobody') chownSync(dir, 65534, 65534)
        expect((await cli(as, dir, 'init')).code).toBe(0)
        const image = (await cli(as, dir, 'machine', 'build', 'busybox')).stdout.split('\t')[0]!
        const { createServer } = await import('node:net')
        const probe = createServer()
        const published = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as { port: number }).port)))
        await new Promise((resolve) => probe.close(resolve))
        const start = await cli(as, dir, 'machine', 'start', image, '--memory', '128', '--net', 'egress', '--allow', `127.0.0.1:${allowedPort}`, '--publish', `${published}:8080`)
        expect(start.code, start.stderr).toBe(0)
        const machine = start.stdout.trim()
        started.push({ as, dir, machine })

        // the guest: the other service on every address it might be reached by, the allowed port on other addresses, QEMU's DNS and host aliases
        const tries = (await hostAddresses()).flatMap((address) => [`${address} ${otherPort}`, ...(address === '10.0.2.2' ? [] : [`${address} ${allowedPort}`])])
        tries.push(`10.0.2.3 ${otherPort}`, `10.0.2.2 1`, `10.0.2.2 2`)
        const script = tries.map((t) => `(printf 'GET /from-guest HTTP/1.0\\r\\n\\r\\n'; sleep 1) | nc -w 5 ${t}`).join('; ')
        await cli(as, dir, 'machine', 'exec', machine, `${script}; true`)
        expect(heard.filter((h) => !h.startsWith('allowed'))).toEqual([])
        // 10.0.2.2:1 is the relay's port for the one allowed destination: that is where it leads
        expect(heard.every((h) => h === 'allowed GET /from-guest HTTP/1.0')).toBe(true)

        // a guest that took QEMU over runs as the relay's user, who can write any header to the host side's socket
        heard.splice(0)
        const egress = join(tmpdir(), `fp-machines-${as === 'root' ? 0 : 65534}`, machine, 'egress.sock')
        const { connect } = await import('node:net')
        for (const destination of [`127.0.0.1 ${otherPort}`, `0.0.0.0 ${otherPort}`, `localhost ${otherPort}`])
          await new Promise<void>((resolve) => {
            const s = connect(egress, () => s.write(`forkpoint-egress ${destination}\nGET /from-qemu HTTP/1.0\r\n\r\n`))
            s.on('close', () => resolve()).on('error', () => resolve())
            s.setTimeout(5000, () => s.destroy())
          })
        expect(heard).toEqual([])

        expect(listeners(published)).toEqual(['0100007F'])
      })
  },
)
