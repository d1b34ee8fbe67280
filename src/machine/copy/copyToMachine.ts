import { randomBytes } from 'node:crypto'
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'
import { basename, posix } from 'node:path'
import { UsageError } from '../../errors/index.js'
import { errnoCode } from '../../util/fsx.js'
import type { MachineRef } from '../MachineBackend.js'
import { withRunningAgent } from '../qemu/qemuProcess.js'
import { besideName, type GuestRun, guestStep } from './guestStep.js'
import { shellQuoted as q } from './shellQuoted.js'

/** A file copied into or out of a machine: where it landed, its size and permission bits. */
export interface MachineCopy {
  path: string
  bytes: number
  mode: number
}

/**
 * Bytes a script carries into the guest: their base64 (64 KiB) keeps a script under
 * Linux's 128 KiB limit on one argument (qemu-ga runs it as `sh -c SCRIPT`).
 */
const CHUNK_BYTES = 48 * 1024

/**
 * Copy a regular file of the host into a running machine, through its guest agent (a
 * guest has no network): to `target`, or into it where it is a folder in the guest. The
 * bytes land in a temp file beside the target, which takes the source's permission bits
 * and is then renamed over it. A folder or another kind of file is refused (exit 2).
 */
export async function copyToMachine(o: MachineRef & { source: string; target: string }): Promise<MachineCopy> {
  const fd = openRegularFile(o.source)
  try {
    const { size, mode } = fstatSync(fd)
    return await withRunningAgent(o, async (run) => {
      const path = await guestTarget(run, o, basename(o.source))
      const tmp = posix.join(posix.dirname(path), besideName(posix.basename(path), randomBytes(4).toString('hex')))
      try {
        await guestStep(run, o.machine, `: > ${q(tmp)}`, `write ${path}`)
        const chunk = Buffer.alloc(CHUNK_BYTES)
        for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk))
          await guestStep(run, o.machine, `printf %s '${chunk.subarray(0, n).toString('base64')}' | base64 -d >> ${q(tmp)}`, `write ${path}`)
        await guestStep(run, o.machine, `chmod ${(mode & 0o777).toString(8)} ${q(tmp)} && mv -f ${q(tmp)} ${q(path)}`, `write ${path}`)
      } catch (err) {
        await run(`rm -f ${q(tmp)}`).catch(() => undefined)
        throw err
      }
      return { path, bytes: size, mode: mode & 0o777 }
    })
  } finally {
    closeSync(fd)
  }
}

/** The guest path a copy writes: `target`, or `name` inside it where it is a folder. */
async function guestTarget(run: GuestRun, o: MachineRef & { target: string }, name: string): Promise<string> {
  return guestStep(run, o.machine, `d=${q(o.target)}; [ -d "$d" ] && d="\${d%/}/"${q(name)}; printf %s "$d"`, `find ${o.target}`)
}

/** A host file opened for reading, refused unless regular (a FIFO is opened without waiting for a writer, to be refused). */
function openRegularFile(path: string): number {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (err) {
    throw new UsageError(`machine cp: cannot read ${path}: ${errnoCode(err) ?? (err as Error).message}`, { value: path }, { cause: err })
  }
  const stat = fstatSync(fd)
  if (stat.isFile()) return fd
  closeSync(fd)
  throw new UsageError(`machine cp: ${path} is ${stat.isDirectory() ? 'a directory' : 'not a regular file'}: machine cp copies one regular file`, { value: path })
}
