import { execFile } from 'node:child_process'
import { accessSync, constants, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { BackendUnavailableError } from '../../errors/index.js'
import { privileged } from '../../sandbox/namespaceHolder.js'
import { runtimeBinary } from '../../sandbox/runtimeBinary.js'
import { errnoCode } from '../../util/fsx.js'
import { type OverlaySpec, options } from './overlayMount.js'
import type { HostView } from '../types.js'

const exec = promisify(execFile)

/** How a branch is mounted in the host's own mount namespace: kernel overlayfs (root) or fuse-overlayfs (anyone, where FUSE is usable). */
export type HostMountVia = HostView['via']

/**
 * How this process can mount a branch where every tool of the host sees it, or null: root
 * mounts kernel overlayfs; anyone else needs fuse-overlayfs, fusermount3 and a `/dev/fuse`
 * it may open (fusermount3 opens it with the caller's own rights, not root's).
 */
export function hostMountVia(): HostMountVia | null {
  if (privileged) return 'kernel'
  return onPath('fuse-overlayfs') && onPath('fusermount3') && accessible('/dev/fuse') ? 'fuse' : null
}

/**
 * Mount overlays in the host's mount namespace, all or none, `nosuid` and `nodev`: what a
 * sandbox wrote there is never a way to root or to a device for whoever can reach the
 * path (fusermount3 sets both for a user's FUSE mount; a kernel mount is remounted so).
 * @throws {BackendUnavailableError}
 */
export async function mountOnHost(via: HostMountVia, specs: OverlaySpec[]): Promise<void> {
  const mounted: string[] = []
  try {
    if (via === 'kernel') {
      await exec(runtimeBinary(), ['mount', ...specs.flatMap((s) => [options(s, { durable: true }), s.target])])
      mounted.push(...specs.map((s) => s.target))
      for (const spec of specs) await exec('mount', ['-o', 'remount,bind,nosuid,nodev', spec.target])
    } else for (const spec of specs) await exec('fuse-overlayfs', ['-o', fuseOptions(spec), spec.target]).then(() => mounted.push(spec.target))
  } catch (err) {
    await unmountFromHost(via, mounted).catch(() => undefined)
    const why = (err as { stderr?: string }).stderr?.trim() || (err as Error).message
    throw new BackendUnavailableError(`cannot mount the branch at ${specs.at(-1)!.target} (${via === 'kernel' ? 'overlayfs' : 'fuse-overlayfs'}): ${why}`, { via, cause: why })
  }
}

/** Take overlays out of the host's mount namespace (lazily: a shell inside does not keep them); one not mounted is fine. */
export async function unmountFromHost(via: HostMountVia, targets: string[]): Promise<void> {
  if (targets.length === 0) return
  if (via === 'kernel') return void (await exec(runtimeBinary(), ['unmount', ...targets]))
  for (const target of targets) {
    await exec('fusermount3', ['-u', '-z', target]).catch((err: { stderr?: string }) => {
      if (!/not found|not mounted|Invalid argument/.test(err.stderr ?? '')) throw err
    })
  }
}

/**
 * 'mounted', 'gone' (a plain directory: after a reboot, or an unmount behind our back) or
 * 'dead' (a FUSE mount whose daemon died: it must be unmounted before mounting again).
 */
export function mountStatus(target: string): 'mounted' | 'gone' | 'dead' {
  try {
    return statSync(target).dev === statSync(dirname(target)).dev ? 'gone' : 'mounted'
  } catch (err) {
    if (errnoCode(err) === 'ENOTCONN') return 'dead'
    throw err
  }
}

/** fuse-overlayfs takes ',' escaped in options but has no escape for ':' inside a lower layer's path. */
function fuseOptions(spec: OverlaySpec): string {
  const paths = [...spec.lower, ...(spec.upper ? [spec.upper.upper, spec.upper.work] : [])]
  const bad = paths.find((p) => /[,:\\]/.test(p))
  if (bad) throw new BackendUnavailableError(`fuse-overlayfs cannot take a path with ',', ':' or '\\': ${bad}`, { path: bad })
  const parts = [`lowerdir=${spec.lower.join(':')}`]
  if (spec.upper) parts.push(`upperdir=${spec.upper.upper}`, `workdir=${spec.upper.work}`)
  return parts.join(',')
}

function onPath(name: string): boolean {
  return (process.env['PATH'] ?? '').split(':').some((dir) => dir !== '' && accessible(join(dir, name), constants.X_OK))
}

function accessible(path: string, mode = constants.R_OK | constants.W_OK): boolean {
  try {
    accessSync(path, mode)
    return true
  } catch {
    return false
  }
}
