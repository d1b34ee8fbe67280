import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { z } from 'zod'
import { CorruptDataError } from '../errors/index.js'
import type { Store } from '../store/Store.js'
import { ACCELERATORS } from '../objects/MachineLayer.js'
import type { MachineRecord } from './machineRecords.js'

const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/)
const processId = z.object({ pid: z.number().int().positive(), start: z.string().max(32) })
const path = z.string().max(4096)

const RecordSchema = z.object({
  id: z.string(),
  pid: z.number().int().min(-1),
  image: digest,
  accelerator: z.enum(ACCELERATORS),
  agent: z.enum(['forkpoint', 'qemu-ga']),
  launch: z.object({
    boot: z.object({ kernel: path, initrd: path, cmdline: z.string().max(4096) }).nullable(),
    memoryMiB: z.number().int().positive(),
    ram: z.object({ path, share: z.boolean() }),
    disk: path,
    sockets: z.object({ qmp: path, agent: path }),
    console: path,
    accelerator: z.enum(ACCELERATORS),
    nic: z
      .object({ open: z.boolean(), guestPorts: z.array(z.number().int().min(1).max(65535)).max(256) })
      .nullable()
      .optional(),
    cdp: z.boolean().optional(),
  }),
  from: digest.nullable(),
  head: digest.nullable(),
  detached: z.boolean(),
  cgroups: z.array(path).max(4),
  createdAt: z.string().max(64),
  failure: z.string().max(8192).optional(),
  starting: processId.optional(),
  pausedBy: processId.optional(),
  expiresAt: z.string().max(64).optional(),
})

const HEX = '[0-9a-f]{64}'
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
/** A cgroup forkpoint made (src/sandbox/cgroup.ts): its name, under the cgroup filesystem, no `..`. */
const CGROUP = /^\/sys\/fs\/cgroup\/(?:[\w.@:-]+\/)*forkpoint-\d+-\d+-[0-9a-f]{12}$/

/**
 * Parse a machine record and check that every path in it is the one its id and the store
 * derive: its own folder's disk, RAM and console, the store's cached kernel and snapshot
 * files, its sockets in the per-user socket folder, cgroups forkpoint makes. A record
 * that names anything else was not written by forkpoint: CorruptDataError (exit 5).
 */
export function checkedRecord(store: Store, id: string, text: string): MachineRecord {
  const refuse = (why: string) => new CorruptDataError(`machine ${id}: its record ${why}; remove ${join(store.root, 'machines', id)} by hand`, { path: id })
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw refuse('is not JSON')
  }
  const result = RecordSchema.safeParse(parsed)
  if (!result.success) throw refuse(`is not a machine record (${result.error.issues[0]?.path.join('.') ?? ''}: ${result.error.issues[0]?.message ?? ''})`)
  const record = result.data as MachineRecord
  const misplaced = misplacedPath(store, id, record)
  if (record.id !== id) throw refuse(`names another machine, ${JSON.stringify(record.id)}`)
  if (misplaced) throw refuse(`names a path of its own choosing (${misplaced})`)
  return record
}

function misplacedPath(store: Store, id: string, r: MachineRecord): string | null {
  const machines = escape(join(store.root, 'machines'))
  const own = escape(join(store.root, 'machines', id))
  const sockets = `${escape(tmpdir())}/fp-machines-\\d+/${escape(id)}`
  const rules: Array<[string, string, RegExp]> = [
    ['disk', r.launch.disk, new RegExp(`^${own}/disk\\.qcow2$`)],
    ['console', r.launch.console, new RegExp(`^${own}/console\\.log$`)],
    ['RAM', r.launch.ram.path, r.launch.ram.share ? new RegExp(`^${own}/ram$`) : new RegExp(`^${machines}/\\.snapshots/${HEX}/ram$`)],
    ['QMP socket', r.launch.sockets.qmp, new RegExp(`^${sockets}/qmp\\.sock$`)],
    ['agent socket', r.launch.sockets.agent, new RegExp(`^${sockets}/agent\\.sock$`)],
    ...(r.launch.boot
      ? ([
          ['kernel', r.launch.boot.kernel, new RegExp(`^${machines}/\\.images/${HEX}/kernel$`)],
          ['initramfs', r.launch.boot.initrd, new RegExp(`^${machines}/\\.images/${HEX}/initrd$`)],
        ] as Array<[string, string, RegExp]>)
      : []),
    ...r.cgroups.map((g): [string, string, RegExp] => ['cgroup', g, CGROUP]),
  ]
  const bad = rules.find(([, value, rule]) => !rule.test(value) || value.split('/').includes('..'))
  return bad ? `${bad[0]} ${JSON.stringify(bad[1])}` : null
}
