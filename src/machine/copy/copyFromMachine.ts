import { randomBytes } from 'node:crypto'
import { closeSync, fchmodSync, lstatSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { basename, dirname, join, posix } from 'node:path'
import { CorruptDataError, UsageError } from '../../errors/index.js'
import { errnoCode } from '../../util/fsx.js'
import type { MachineRef } from '../MachineBackend.js'
import { withRunningAgent } from '../qemu/qemuProcess.js'
import type { MachineCopy } from './copyToMachine.js'
import { besideName, type GuestRun, guestStep } from './guestStep.js'
import { shellQuoted as q } from './shellQuoted.js'

/** The most bytes `copyFromMachine` takes from a guest unless told otherwise: a guest is not trusted to send a file of a sane size. */
export const DEFAULT_COPY_MAX_BYTES = 2 ** 30

/** Bytes a guest sends for one script: base64 of 1 MiB, well under the agent's line cap. */
const CHUNK_BYTES = 2 ** 20

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

export interface CopyFromMachineOptions extends MachineRef {
  /** A regular file in the guest. */
  source: string
  /** A host path, or a host folder to put the file in under its name. */
  target: string
  /** The most bytes to take: a file larger, by its size or by what the guest sends, is refused (exit 5). @default DEFAULT_COPY_MAX_BYTES (1 GiB) */
  maxBytes?: number
}

/**
 * Copy a regular file out of a running machine through its guest agent, bytes exact and
 * with its permission bits (no setuid, setgid or sticky bit). What the guest sends is
 * untrusted: it is written to a new temp file beside the target (so a symlink at the
 * target is replaced, never followed) and renamed over the target only once whole; past
 * `maxBytes`, or not base64, it is refused (exit 5) and the temp file removed. A guest
 * path missing, a folder or not a regular file is refused (exit 2).
 */
export async function copyFromMachine(o: CopyFromMachineOptions): Promise<MachineCopy> {
  const maxBytes = o.maxBytes ?? DEFAULT_COPY_MAX_BYTES
  return withRunningAgent(o, async (run) => {
    const { mode } = await guestFile(run, o, maxBytes)
    const path = hostTarget(o.target, posix.basename(o.source))
    const tmp = join(dirname(path), besideName(basename(path), randomBytes(4).toString('hex')))
    const fd = openNew(tmp)
    try {
      const bytes = await receive(run, o, fd, maxBytes)
      fchmodSync(fd, mode)
      closeSync(fd)
      renameSync(tmp, path)
      return { path, bytes, mode }
    } catch (err) {
      closeSync(fd)
      rmSync(tmp, { force: true })
      throw err
    }
  })
}

/** The guest file's size and permission bits, as its guest tells them; refused unless a regular file within the cap. */
async function guestFile(run: GuestRun, o: CopyFromMachineOptions, maxBytes: number): Promise<{ size: number; mode: number }> {
  const answer = await guestStep(
    run,
    o.machine,
    `p=${q(o.source)}; if [ ! -e "$p" ]; then echo missing; elif [ -d "$p" ]; then echo directory; elif [ ! -f "$p" ]; then echo special; else stat -L -c '%s %a' "$p"; fi`,
    `read ${o.source}`,
  )
  const refused = { missing: 'no such file', directory: 'a directory', special: 'not a regular file' }[answer.trim()]
  if (refused) throw new UsageError(`machine ${o.machine}: ${o.source} is ${refused} in the guest: machine cp copies one regular file`, { value: o.source })
  const stat = /^(\d{1,16}) ([0-7]{1,4})\n?$/.exec(answer)
  if (!stat)
    throw new CorruptDataError(`machine ${o.machine}: the guest described ${o.source} as ${JSON.stringify(answer.slice(0, 80))}, not a size and a mode`, { path: o.source })
  const size = Number(stat[1])
  if (size > maxBytes) throw overCap(o, maxBytes)
  return { size, mode: parseInt(stat[2]!, 8) & 0o777 }
}

/** Take the file from the guest a chunk a script, into `fd`; the count of bytes written. */
async function receive(run: GuestRun, o: CopyFromMachineOptions, fd: number, maxBytes: number): Promise<number> {
  let total = 0
  for (let index = 0; ; index++) {
    const text = await guestStep(run, o.machine, `dd if=${q(o.source)} bs=${CHUNK_BYTES} skip=${index} count=1 2>/dev/null | base64 -w 0`, `read ${o.source}`)
    if (!BASE64.test(text)) throw new CorruptDataError(`machine ${o.machine}: the guest sent ${o.source} as something other than base64`, { path: o.source })
    const chunk = Buffer.from(text, 'base64')
    if (chunk.length > CHUNK_BYTES) throw new CorruptDataError(`machine ${o.machine}: the guest sent more of ${o.source} than was asked for`, { path: o.source })
    total += chunk.length
    if (total > maxBytes) throw overCap(o, maxBytes)
    writeSync(fd, chunk)
    if (chunk.length < CHUNK_BYTES) return total
  }
}

const overCap = (o: CopyFromMachineOptions, maxBytes: number) =>
  new CorruptDataError(`machine ${o.machine}: ${o.source} is over ${maxBytes} bytes, the most machine cp takes from a guest (--max-bytes)`, { path: o.source })

/** The host path a copy writes: `target`, or `name` inside it where it is a folder (a symlink is not one: it is replaced). */
function hostTarget(target: string, name: string): string {
  let folder = false
  try {
    folder = lstatSync(target).isDirectory()
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') throw err
  }
  if (!folder) return target
  if (name === '' || name === '.' || name === '..') throw new UsageError(`machine cp: name the file to write in ${target}`, { value: target })
  return join(target, name)
}

/** A new file only this user can read until it is whole: never one that exists, nor a symlink. */
function openNew(path: string): number {
  try {
    return openSync(path, 'wx', 0o600)
  } catch (err) {
    throw new UsageError(`machine cp: cannot write beside ${path}: ${errnoCode(err) ?? (err as Error).message}`, { value: path }, { cause: err })
  }
}
