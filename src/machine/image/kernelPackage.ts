import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { MachineUnavailableError } from '../../errors/index.js'
import { forkpointCacheDir } from './cacheDir.js'
import { runTool } from '../runTool.js'

/** The Debian metapackage whose dependency is the current cloud kernel: virtio as modules, serial 8250 and PVH built in. */
export const KERNEL_METAPACKAGE = 'linux-image-cloud-amd64'

/** A Debian kernel package unpacked (never installed) in the user's cache. */
export interface GuestKernel {
  /** The kernel's release, `6.1.0-56-cloud-amd64`. */
  release: string
  vmlinuz: string
  /** `lib/modules/<release>/kernel` of the package. */
  modules: string
}

const kernelCacheDir = () => join(forkpointCacheDir(), 'kernels')

/**
 * The cloud kernel apt knows now, fetched with `apt-get download` and unpacked with
 * `dpkg-deb -x` into the cache once (a second build reuses it). MachineUnavailableError
 * (exit 2) when apt has no such package or the tools are missing.
 */
export async function fetchGuestKernel(cacheDir = kernelCacheDir()): Promise<GuestKernel> {
  const pkg = await kernelPackageName()
  const release = pkg.replace(/^linux-image-/, '')
  const dir = join(cacheDir, pkg)
  if (!existsSync(join(dir, 'boot', `vmlinuz-${release}`))) await unpackInto(pkg, cacheDir, dir)
  return { release, vmlinuz: join(dir, 'boot', `vmlinuz-${release}`), modules: join(dir, 'lib', 'modules', release, 'kernel') }
}

async function kernelPackageName(): Promise<string> {
  const { stdout } = await runTool('apt-cache', ['depends', KERNEL_METAPACKAGE])
  const pkg = /Depends:\s*(linux-image-\S+)/.exec(stdout)?.[1]
  if (!pkg) throw new MachineUnavailableError(`apt knows no ${KERNEL_METAPACKAGE}: run apt-get update`, { tool: 'apt-cache', hint: 'apt-get update' })
  return pkg
}

async function unpackInto(pkg: string, cacheDir: string, dir: string): Promise<void> {
  mkdirSync(cacheDir, { recursive: true })
  const work = mkdtempSync(join(cacheDir, '.fetch-'))
  try {
    await runTool('apt-get', ['download', '-q', pkg], work)
    const deb = readdirSync(work).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'))
    if (!deb) throw new MachineUnavailableError(`apt-get download ${pkg} left no .deb`, { tool: 'apt-get' })
    await runTool('dpkg-deb', ['-x', deb, 'root'], work)
    rmSync(dir, { recursive: true, force: true })
    renameSync(join(work, 'root'), dir) // whole or not at all: another build never sees half a kernel
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
