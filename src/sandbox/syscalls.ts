import { SandboxError } from '../errors/index.js'

/** Linux syscall numbers the perl helpers need (perl has no wrappers for them). */
export interface Syscalls {
  mount: number
  umount2: number
  unshare: number
  prlimit64: number
  setns: number
  prctl: number
}

const TABLE: Partial<Record<NodeJS.Architecture, Syscalls>> = {
  x64: { mount: 165, umount2: 166, unshare: 272, prlimit64: 302, setns: 308, prctl: 157 },
  arm64: { mount: 40, umount2: 39, unshare: 97, prlimit64: 261, setns: 268, prctl: 167 },
}

/**
 * This machine's numbers, written into the perl scripts by Node, which knows its
 * architecture: perl would need `use Config` to tell, 1.5 ms of every sandbox's start.
 * @throws {SandboxError} an architecture without namespaced sandboxes here
 */
export function syscalls(): Syscalls {
  const table = TABLE[process.arch]
  if (!table) throw new SandboxError(`sandboxes and overlay branches are not supported on ${process.arch} (x64 and arm64 are)`, { arch: process.arch })
  return table
}
