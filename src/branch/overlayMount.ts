import { spawn } from 'node:child_process'
import { BackendUnavailableError } from '../errors/index.js'
import { isAlive, processId } from './processId.js'
import type { ProcessId } from './types.js'

/** One overlay mount: `upper` absent makes a read-only stack of the lower layers. */
export interface OverlaySpec {
  target: string
  lower: string[]
  upper?: { upper: string; work: string }
}

/** Root needs no user namespace to mount (and keeps overlay marks in trusted.* xattrs). */
export const privileged = process.getuid?.() === 0

/** Overlay options take ',' ':' and '\' escaped with a backslash. */
const escape = (path: string): string => path.replace(/[\\,:]/g, (c) => `\\${c}`)

function options(spec: OverlaySpec): string {
  const parts = [`lowerdir=${spec.lower.map(escape).join(':')}`]
  if (spec.upper) parts.push(`upperdir=${escape(spec.upper.upper)}`, `workdir=${escape(spec.upper.work)}`)
  // Unprivileged overlays keep whiteouts' and opaque directories' marks in user.* xattrs.
  if (!privileged) parts.push('userxattr')
  return parts.join(',')
}

const HOLDER_SCRIPT = `set -e
persist=$1; shift
while [ $# -gt 1 ]; do mount -t overlay overlay -o "$1" "$2"; shift 2; done
echo ready
if [ "$persist" = 1 ]; then exec sleep infinity; fi
read -r _ || true`

/**
 * Start a process holding a new mount namespace (and, unless we are root, a user
 * namespace) with the overlays mounted in it; they are reachable from outside as
 * `/proc/<pid>/root/<target>`. A persistent holder is detached and lives until stopped;
 * otherwise it exits as soon as this process dies (its stdin is our pipe). Either way the
 * mounts vanish with the holder: nothing is ever left mounted in the host's namespace.
 */
export async function startHolder(specs: OverlaySpec[], { persistent }: { persistent: boolean }): Promise<ProcessId> {
  const args = [...(privileged ? [] : ['--user', '--map-root-user']), '--mount', '--propagation', 'private', 'sh', '-c', HOLDER_SCRIPT, 'holder', persistent ? '1' : '0']
  for (const spec of specs) args.push(options(spec), spec.target)
  const child = spawn('unshare', args, { stdio: [persistent ? 'ignore' : 'pipe', 'pipe', 'pipe'], detached: persistent })
  const output = await new Promise<string>((resolve, reject) => {
    let out = ''
    let err = ''
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      if (out.includes('ready\n')) resolve(out)
    })
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()))
    child.once('error', reject)
    child.once('exit', (code) => reject(new BackendUnavailableError(`cannot mount overlayfs in a user namespace (exit ${code}): ${err.trim()}`, { stderr: err })))
  })
  if (!output.includes('ready')) throw new BackendUnavailableError('overlay holder did not start')
  child.removeAllListeners('exit')
  child.stdout!.destroy()
  child.stderr!.destroy()
  child.unref()
  ;(child.stdin as unknown as { unref?: () => void } | null)?.unref?.()
  return processId(child.pid!)
}

/** Kill a namespace holder and wait until it is gone, so its mounts are gone too. */
export async function stopHolder(holder: ProcessId): Promise<void> {
  if (!isAlive(holder)) return
  try {
    process.kill(holder.pid, 'SIGKILL')
  } catch {
    return
  }
  for (let i = 0; i < 2000 && isAlive(holder); i++) await new Promise((r) => setTimeout(r, 1))
}

/** The path under which this process sees `path` of a holder's mount namespace. */
export function throughHolder(holder: ProcessId | null, path: string): string {
  return holder ? `/proc/${holder.pid}/root${path}` : path
}
