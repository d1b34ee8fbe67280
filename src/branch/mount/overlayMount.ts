import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { BackendUnavailableError, SandboxError } from '../../errors/index.js'
import { isHolder, ownSharedHolder, ownUserNamespace, privileged, stopHolder } from '../../sandbox/namespaceHolder.js'
import { sandboxRuntime } from '../../sandbox/SandboxRuntime.js'
import { type ProcessId, isAlive } from '../../sandbox/processId.js'

const exec = promisify(execFile)

/** One overlay mount: `upper` absent makes a read-only stack of the lower layers. */
export interface OverlaySpec {
  target: string
  lower: string[]
  upper?: { upper: string; work: string }
}

/** Overlay options take ',' ':' and '\' escaped with a backslash. */
const escape = (path: string): string => path.replace(/[\\,:]/g, (c) => `\\${c}`)

export function options(spec: OverlaySpec, { durable }: { durable: boolean }): string {
  const parts = [`lowerdir=${spec.lower.map(escape).join(':')}`]
  if (spec.upper) parts.push(`upperdir=${escape(spec.upper.upper)}`, `workdir=${escape(spec.upper.work)}`)
  // A branch that dies with this process never needs its upper layer after a crash, so
  // its overlay skips syncing it (on unmount, a sync of the whole upper file system).
  if (spec.upper && !durable) parts.push('volatile')
  // Unprivileged overlays keep whiteouts' and opaque directories' marks in user.* xattrs.
  if (!privileged) parts.push('userxattr')
  return parts.join(',')
}

/** A namespace holder that could not mount is an overlay backend that does not work here. */
function unavailable(err: unknown): never {
  if (err instanceof SandboxError) throw new BackendUnavailableError(`cannot mount overlayfs${privileged ? '' : ' in a user namespace'}: ${err.message}`, { cause: err.message })
  throw err
}

/**
 * Start a holder of its own for a persistent branch (it outlives this process), with the
 * overlays mounted in its namespace: nothing is ever mounted in the host's namespace. It
 * records itself in `pidFile` (see `stopStrayHolders`).
 */
export function startHolder(specs: OverlaySpec[], pidFile: string): Promise<ProcessId> {
  return sandboxRuntime()
    .startHolder(
      specs.map((s) => [options(s, { durable: true }), s.target]),
      pidFile,
    )
    .catch(unavailable)
}

/**
 * Mount overlays in this process's shared holder; returns the holder. All or none: the
 * branch is not recorded as mounted when one fails, so nothing else would unmount the rest.
 */
export async function mountShared(specs: OverlaySpec[]): Promise<ProcessId> {
  const holder = await sandboxRuntime().sharedHolder().catch(unavailable)
  const mounted: string[] = []
  try {
    for (const spec of specs) {
      await holder.request('m', options(spec, { durable: false }), spec.target)
      mounted.push(spec.target)
    }
  } catch (err) {
    for (const target of mounted.reverse()) await holder.request('u', target).catch(() => undefined)
    unavailable(err)
  }
  return holder.id
}

/**
 * Take overlays down. In this process's shared holder: a request on its pipe (a lazy
 * unmount: nothing stays visible). A holder that serves nothing else (`exclusive`: a
 * persistent branch's own, or the shared holder of a process that is gone): killed, its
 * mounts go with it. Another live process's shared holder: unmounted from inside its
 * namespaces, as it keeps that process's other branches.
 */
export async function unmount(holder: ProcessId, targets: string[], { exclusive }: { exclusive: boolean }): Promise<void> {
  const ours = await ownSharedHolder(holder.pid)
  if (ours) {
    for (const target of targets) await ours.request('u', target)
    return
  }
  if (exclusive) return stopHolder(holder)
  if (!isHolder(holder)) return
  const user = await ownUserNamespace(holder.pid)
  for (const target of targets) {
    await exec('nsenter', [`--target=${holder.pid}`, ...(user ? ['--user', '--preserve-credentials'] : []), '--mount', 'umount', '-l', target]).catch(
      (err: { stderr?: string }) => {
        if (isAlive(holder) && !/not mounted/.test(err.stderr ?? '')) throw err
      },
    )
  }
}

/** The path under which this process sees `path` of a holder's mount namespace. */
export function throughHolder(holder: ProcessId | null, path: string): string {
  return holder ? `/proc/${holder.pid}/root${path}` : path
}
