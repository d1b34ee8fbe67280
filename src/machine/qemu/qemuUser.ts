import { readFileSync } from 'node:fs'

/** The host ids root's QEMUs run as after they have opened their devices and files. */
export interface QemuUser {
  uid: number
  gid: number
}

/** Root's sandboxes take ids START to START + 65535 (native/sandbox.c); QEMU takes the next one. */
const SANDBOX_ID_BASE = 1879048192
const SANDBOX_ID_COUNT = 65536

/**
 * For a root caller, the unprivileged user its QEMUs become (`-runas`): the id right after
 * the sandbox's range of root's (root's range in /etc/subuid and /etc/subgid when it holds
 * both, else the fixed range), so it owns no file of anyone's and is no sandbox's id. One
 * user for all of root's machines, as libvirt's `libvirt-qemu`. Null for any other caller:
 * its QEMU is already the caller, without privilege.
 */
export function qemuUser(): QemuUser | null {
  if (process.getuid?.() !== 0) return null
  user ??= { uid: idAfterSandboxRange('/etc/subuid'), gid: idAfterSandboxRange('/etc/subgid') }
  return user
}

/** Read once a process: every launch, socket directory and migration socket asks. */
let user: QemuUser | undefined

function idAfterSandboxRange(file: string): number {
  return rootRangeStart(file, SANDBOX_ID_COUNT + 1) + SANDBOX_ID_COUNT
}

/** The first id of root's range in `file` when it holds `count` ids, else the fixed base. */
function rootRangeStart(file: string, count: number): number {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return SANDBOX_ID_BASE // no such file: the fixed range
  }
  for (const line of text.split('\n')) {
    const [owner, first, size] = line.trim().split(':')
    if ((owner === 'root' || owner === '0') && Number(first) > 0 && Number(size) >= count) return Number(first)
  }
  return SANDBOX_ID_BASE
}
