import type { Command } from 'commander'
import { UsageError } from '../../errors/index.js'
import type { MachineInfo } from '../../machine/MachineBackend.js'
import type { MachineNetMode } from '../../machine/net/machineNet.js'
import { type CommonFlags, common, commonFlags } from '../context.js'
import { listLines, short } from '../../operations/text/format.js'
import { print } from '../output.js'
import { stopSignal } from '../stopSignal.js'
import { wholeNumber } from '../wholeNumber.js'
import type { Rendering } from '../../operations/rendering.js'

const api = () => import('../../machine/machineApi.js')
const where = (flags: CommonFlags) => ({ dir: flags.dir, ...(flags.store ? { store: flags.store } : {}) })

const machineLine = (m: MachineInfo) =>
  `${m.id}\t${m.state}\t${m.accelerator}\t${m.memoryMiB} MiB\t${m.from ? `from ${short(m.from)}` : 'booted'}${m.head ? `\tlast snapshot ${short(m.head)}` : ''}${m.failure ? `\t${m.failure}` : ''}${m.expiresAt ? `\t${timeLeft(m.expiresAt)} left` : ''}`

/** What remains of a time to live, in the largest unit that keeps it over one. */
function timeLeft(expiresAt: string): string {
  const s = Math.max(0, Math.ceil((Date.parse(expiresAt) - Date.now()) / 1000))
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.ceil(s / 60)}m` : `${Math.ceil(s / 3600)}h`
}

interface TtlFlag {
  ttl?: string
}

const withTtl = (command: Command) => command.option('--ttl <duration>', 'kill and remove the machine after this long (e.g. 90s, 30m, 2h), whether or not forkpoint runs then')

interface NetFlags {
  net?: string
  allow?: string[]
  publish?: string[]
}

const collect = (value: string, previous: string[]): string[] => [...previous, value]

const withNet = (command: Command) =>
  command
    .option('--net <none|egress>', "the guest's network: none (no network device), or egress: only to --allow'ed destinations", 'none')
    .option(
      '--allow <host[:port]>',
      "with --net egress: a destination the guest may connect to (repeatable; a host alone: its ports 80 and 443); the host's 127.0.0.1 is 10.0.2.2 in the guest",
      collect,
      [],
    )
    .option('--publish <hostPort:guestPort>', "with --net egress: serve the guest's port on the host's 127.0.0.1 (repeatable)", collect, [])

/** The library's network options from the flags: `--net` is checked there. */
const netOptions = (opts: NetFlags) => ({ net: opts.net as MachineNetMode, allow: opts.allow ?? [], publish: opts.publish ?? [] })

const machinesView: Rendering<{ machines: MachineInfo[] }> = { human: (r) => listLines(r.machines, machineLine, 'no machines') }

interface AccelFlag {
  accel?: string
}

const withAccel = (command: Command) =>
  command.option('--accel <kvm|tcg|auto>', 'the accelerator (default: FORKPOINT_ACCEL, else auto: KVM where a boot of the kernel on it works, else TCG)')

/** `--accel`, else FORKPOINT_ACCEL, else auto. */
const accel = async (opts: AccelFlag) => (await api()).acceleratorRequest(opts.accel ?? process.env['FORKPOINT_ACCEL'] ?? 'auto')

export function registerMachine(program: Command): void {
  const machine = program.command('machine').description('microVM sandboxes (QEMU): boot, exec, snapshot running, fork N children from warm')
  const sub = (spec: string, description: string) => common(machine.command(spec)).description(description)

  withAccel(sub('doctor', 'boot a busybox machine to find which accelerator machines run on here (KVM or TCG), and why')).action(async (opts: AccelFlag, cmd: Command) => {
    print(commonFlags(cmd), await (await api()).machineDoctor({ accel: await accel(opts) }), { human: (r) => `${r.accelerator}: ${r.reason}\nQEMU ${r.qemu}` })
  })

  sub('build <recipe>', 'build a machine image from Debian packages (recipe: busybox, python, node or browser)')
    .option('-p, --package <name...>', 'more Debian packages for a python, node or browser image')
    .action(async (recipe: string, opts: { package?: string[] }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const r = await (await api()).buildMachineImage({ ...where(flags), recipe, packages: opts.package ?? [] })
      print(flags, r, { human: (i) => `${i.image}\t${i.recipe}, kernel ${i.kernelRelease}` })
    })

  withNet(withTtl(withAccel(sub('start <image>', 'boot a machine image; the machine runs until machine kill or its --ttl'))))
    .option('--memory <MiB>', 'guest RAM', '256')
    .option('--disk <MiB>', "the guest's disk: a blank one at /data (busybox), or the root filesystem grown to it (default: the image's and 256 MiB more)")
    .action(async (image: string, opts: { memory: string; disk?: string } & AccelFlag & TtlFlag & NetFlags, cmd: Command) => {
      const flags = commonFlags(cmd)
      const m = await (
        await api()
      ).bootMachine({
        ...where(flags),
        image,
        memoryMiB: wholeNumber('machine', '--memory', opts.memory),
        ...(opts.disk === undefined ? {} : { diskMiB: wholeNumber('machine', '--disk', opts.disk) }),
        detached: true,
        accel: await accel(opts),
        ttl: opts.ttl,
        ...netOptions(opts),
      })
      print(flags, m, { human: (r) => r.id })
    })

  sub('exec <machine> <command...>', "run a command in the machine (with its /bin/sh); exits with the command's exit code").action(
    async (id: string, words: string[], _opts: object, cmd: Command) => {
      const flags = commonFlags(cmd)
      const result = await (await api()).execMachine({ ...where(flags), machine: id, command: words.length === 1 ? words[0]! : words.map(shellWord).join(' ') })
      print(flags, result, {
        human: (r) => {
          process.stderr.write(r.stderr)
          return r.stdout
        },
        exit: (r) => r.exitCode,
      })
    },
  )

  sub('eval <machine> <js>', "evaluate a JavaScript expression in a browser machine's current page; prints its JSON value").action(
    async (id: string, js: string, _opts: object, cmd: Command) => {
      const flags = commonFlags(cmd)
      const value = await (await api()).evalInMachine({ ...where(flags), machine: id, js })
      print(flags, { value }, { human: (r) => JSON.stringify(r.value) })
    },
  )

  sub('cdp <machine>', "serve a browser machine's DevTools protocol on 127.0.0.1 for Playwright's connectOverCDP, with a bearer token, until interrupted")
    .option('--port <port>', 'the loopback port (default: a free one)', '0')
    .action(async (id: string, opts: { port: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const endpoint = await (await import('../../service/machineCdp.js')).serveMachineCdp({ ...where(flags), machine: id, port: wholeNumber('machine', '--port', opts.port) })
      const { url, token } = endpoint
      const stopped = stopSignal()
      print(flags, { url, token }, { human: (e) => `${e.url}\nAuthorization: Bearer ${e.token}` })
      await stopped
      await endpoint.close()
    })

  sub('cp <source> <target>', 'copy a regular file into a machine (machine cp FILE ID:PATH) or out of one (machine cp ID:PATH FILE), bytes and mode')
    .option('--max-bytes <size>', 'the largest file to take out of a machine (e.g. 64M, 2G)', '1G')
    .action(async (source: string, target: string, opts: { maxBytes: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const m = await api()
      const [from, to] = [inMachine(source), inMachine(target)]
      if ((from === null) === (to === null)) throw new UsageError('machine cp: exactly one of source and target is ID:PATH, a path in a machine', { value: `${source} ${target}` })
      const copy = from
        ? await m.copyFromMachine({ ...where(flags), machine: from.machine, source: from.path, target, maxBytes: m.parseSize(opts.maxBytes, '--max-bytes') })
        : await m.copyToMachine({ ...where(flags), machine: to!.machine, source, target: to!.path })
      print(flags, copy, { human: (c) => `${c.path}\t${c.bytes} bytes, mode ${c.mode.toString(8)}` })
    })

  sub('commit <machine>', "snapshot a machine and send the requests its guest made that the effects policy deferred (its siblings' are dropped when they are killed)")
    .option('-m, --message <text>', 'the image message')
    .action(async (id: string, opts: { message?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const r = await (await api()).commitMachine({ ...where(flags), machine: id, env: process.env, ...(opts.message ? { message: opts.message } : {}) })
      print(flags, r, { human: (c) => c.image, notes: (c) => [`${c.effects.sent.length} deferred request(s) sent`] })
    })

  sub('console <machine>', "attach to the machine's serial console, a shell in the guest; Ctrl-] detaches").action(async (id: string, _opts: object, cmd: Command) => {
    const flags = commonFlags(cmd)
    const terminal = process.stdin.isTTY
    if (terminal) {
      process.stdin.setRawMode(true)
      process.stderr.write(`attached to ${id}'s console; Ctrl-] detaches\r\n`)
    }
    try {
      await (await api()).machineConsole({ ...where(flags), machine: id, input: process.stdin, output: process.stdout })
    } finally {
      if (terminal) process.stdin.setRawMode(false)
      process.stdin.pause()
    }
  })

  sub('snapshot <machine>', 'snapshot a running machine into an image (the machine goes on)')
    .option('-m, --message <text>', 'the image message')
    .action(async (id: string, opts: { message?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const r = await (await api()).snapshotMachine({ ...where(flags), machine: id, ...(opts.message ? { message: opts.message } : {}) })
      print(flags, r, {
        human: (s) => s.image,
        notes: (s) => [
          `paused ${s.pausedMs.toFixed(0)} ms; ${(s.newBytes / 1e6).toFixed(1)} MB new in the store (RAM ${s.memoryBytes / 2 ** 20} MiB, disk ${s.diskBytes / 2 ** 20} MiB)`,
        ],
      })
    })

  withNet(withTtl(withAccel(sub('fork <snapshot>', 'start N children from a snapshot image, each continuing from its instant with a disk of its own'))))
    .option('-n <count>', 'how many children', '1')
    .option('--trust-machine', 'load the device state of an image from another store (verify its signature on pull first)')
    .action(async (image: string, opts: { n: string; trustMachine?: boolean } & AccelFlag & TtlFlag & NetFlags, cmd: Command) => {
      const flags = commonFlags(cmd)
      const fork = {
        ...where(flags),
        image,
        n: wholeNumber('machine', '-n', opts.n),
        detached: true,
        accel: await accel(opts),
        trustMachine: opts.trustMachine ?? false,
        ttl: opts.ttl,
        ...netOptions(opts),
      }
      const machines = await (await api()).forkMachine(fork)
      print(flags, { machines }, { human: (r) => r.machines.map((m) => m.id).join('\n') })
    })

  sub('ls', "the store's machines").action(async (_opts: object, cmd: Command) => {
    const flags = commonFlags(cmd)
    print(flags, { machines: await (await api()).listMachines(where(flags)) }, machinesView)
  })

  sub('kill <machines...>', 'stop machines and remove them (their snapshots stay)').action(async (ids: string[], _opts: object, cmd: Command) => {
    const flags = commonFlags(cmd)
    const { killMachine } = await api()
    for (const id of ids) await killMachine({ ...where(flags), machine: id })
    print(flags, { killed: ids }, { human: (r) => `killed ${r.killed.join(' ')}` })
  })

  sub('rm <machines...>', 'remove machines that are not running (a failed one keeps its logs until then)').action(async (ids: string[], _opts: object, cmd: Command) => {
    const flags = commonFlags(cmd)
    const { removeMachine } = await api()
    for (const id of ids) await removeMachine({ ...where(flags), machine: id })
    print(flags, { removed: ids }, { human: (r) => `removed ${r.removed.join(' ')}` })
  })

  sub('gc', 'reap what killed processes left: incomplete, gone and failed machines, and QEMUs no record names').action(async (_opts: object, cmd: Command) => {
    const flags = commonFlags(cmd)
    print(flags, await (await api()).machineGc(where(flags)), {
      human: (r) =>
        r.removed.length + r.orphans.length === 0
          ? 'nothing to reap'
          : [...r.removed.map((id) => `removed ${id}`), ...r.orphans.map((pid) => `killed QEMU ${pid} (no record)`)].join('\n'),
    })
  })

  sub('stats <machine>', "the machine's memory as the host counts it (RSS, PSS)").action(async (id: string, _opts: object, cmd: Command) => {
    const flags = commonFlags(cmd)
    print(flags, await (await api()).machineStats({ ...where(flags), machine: id }), {
      human: (s) =>
        `pid ${s.pid}\tRSS ${(s.rssBytes / 2 ** 20).toFixed(1)} MiB\tPSS ${(s.pssBytes / 2 ** 20).toFixed(1)} MiB\tprivate dirty ${(s.privateDirtyBytes / 2 ** 20).toFixed(1)} MiB`,
    })
  })

  sub('diff <a> <b>', 'what changed between two machine snapshots: RAM pages, disk blocks, device state').action(async (a: string, b: string, _opts: object, cmd: Command) => {
    const flags = commonFlags(cmd)
    print(flags, await (await api()).diffMachines({ ...where(flags), a, b }), {
      human: (d) =>
        `memory: ${d.memory.changed} of ${d.memory.pages} pages changed\ndisk: ${d.disk.changed} of ${d.disk.blocks} blocks changed\ndevices: ${d.devicesChanged ? 'changed' : 'same'}`,
      exit: (d) => (d.memory.changed + d.disk.changed > 0 || d.devicesChanged ? 1 : 0),
    })
  })
}

/** `ID:PATH`, a path in a machine; null for a host path. */
function inMachine(arg: string): { machine: string; path: string } | null {
  const match = /^(m[0-9a-f]{8}):(.+)$/.exec(arg)
  return match ? { machine: match[1]!, path: match[2]! } : null
}

/** Words after `--` joined back into one line for the guest's sh, each quoted. */
const shellWord = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`)
