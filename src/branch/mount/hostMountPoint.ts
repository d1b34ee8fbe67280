import { readFileSync, readdirSync, realpathSync, statSync } from 'node:fs'
import { basename } from 'node:path'
import type { HostView } from '../types.js'

/**
 * Where the host's mount namespace has a branch's writable view mounted, found from the
 * kernel, never from the store: the kernel overlay whose `upperdir` is the branch's own
 * upper layer (`/proc/self/mountinfo` shows it), or the mount point of this user's
 * fuse-overlayfs daemon serving that upper layer (its arguments), when the kernel lists a
 * FUSE mount there. Null when no such mount is there (after a reboot).
 */
export function hostMountPoint(via: HostView['via'], upper: string): string | null {
  const named = new Set([upper, realOrSelf(upper)].map((u) => `upperdir=${u}`))
  const mounts = readMounts()
  if (via === 'kernel') return mounts.find((m) => m.type === 'overlay' && m.options.some((o) => named.has(o)))?.point ?? null
  const point = fuseDaemonTarget(named)
  return point !== null && mounts.some((m) => m.point === point && m.type === 'fuse.fuse-overlayfs') ? point : null
}

interface Mount {
  point: string
  type: string
  options: string[]
}

/** mountinfo escapes space, tab, newline and backslash in octal; overlayfs escapes ',' and '=' in its options the same way. */
const unescape = (field: string): string => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)))

function readMounts(): Mount[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [before, after = ''] = line.split(' - ')
      const [type = '', , options = ''] = after.split(' ')
      return { point: unescape(before!.split(' ')[4] ?? ''), type, options: options.split(',').map(unescape) }
    })
}

/** The target of a fuse-overlayfs process of this user with one of the `upperdir=` options `named`. */
function fuseDaemonTarget(named: Set<string>): string | null {
  const uid = process.getuid?.()
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    const argv = argvOf(pid, uid)
    if (!argv || basename(argv[0] ?? '') !== 'fuse-overlayfs') continue
    const options = argv.flatMap((a, i) => (argv[i - 1] === '-o' ? a.split(',') : []))
    if (options.some((o) => named.has(o))) return argv.at(-1) ?? null
  }
  return null
}

function argvOf(pid: string, uid: number | undefined): string[] | null {
  try {
    if (statSync(`/proc/${pid}`).uid !== uid) return null
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1)
  } catch {
    return null // gone meanwhile
  }
}

/** The store may be reached through a symlink one time and not the next: a mount made either way is found. */
function realOrSelf(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}
