import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { MachineUnavailableError } from '../../errors/index.js'
import { type CpioEntry, writeCpio } from './cpio.js'
import type { GuestKernel } from './kernelPackage.js'
import { GUEST_MODULES } from './guestScripts.js'
import { FRESH_START_PATH, freshStartElf } from './freshStartElf.js'

/** Debian's busybox-static puts a static busybox here. */
const BUSYBOX = '/bin/busybox'

/**
 * An initramfs of a static busybox, the virtio modules the guest needs (dependencies
 * first), a fork's fresh-start program, `/init` (given the modules' names in load order) and `extra`
 * files. The same kernel, busybox and files give the same bytes.
 */
export function guestInitramfs(kernel: GuestKernel, init: (modules: string[]) => string, extra: readonly CpioEntry[] = []): Buffer {
  const modules = moduleFiles(kernel.modules, GUEST_MODULES)
  return writeCpio([
    ...['bin', 'dev', 'proc', 'sys', 'tmp', 'data', 'lib', 'lib/modules'].map((path) => ({ path, type: 'dir' as const, mode: 0o755 })),
    { path: 'dev/console', type: 'char', mode: 0o600, major: 5, minor: 1 },
    { path: 'bin/busybox', type: 'file', mode: 0o755, data: staticBusybox() },
    ...applets().map((name) => ({ path: `bin/${name}`, type: 'symlink' as const, target: 'busybox' })),
    ...modules.map(({ name, path }) => ({ path: `lib/modules/${name}.ko`, type: 'file' as const, mode: 0o644, data: readFileSync(path) })),
    { path: 'init', type: 'file', mode: 0o755, data: Buffer.from(init(modules.map((m) => m.name))) },
    { path: FRESH_START_PATH.slice(1), type: 'file', mode: 0o755, data: freshStartElf() },
    ...extra,
  ])
}

function staticBusybox(): Buffer {
  const bytes = (() => {
    try {
      return readFileSync(BUSYBOX)
    } catch {
      throw new MachineUnavailableError(`${BUSYBOX} is missing: install busybox-static`, { tool: 'busybox', hint: 'apt-get install busybox-static' })
    }
  })()
  if (hasInterpreter(bytes))
    throw new MachineUnavailableError(`${BUSYBOX} is linked dynamically; the guest needs busybox-static`, { tool: 'busybox', hint: 'apt-get install busybox-static' })
  return bytes
}

/** Whether an ELF file names a dynamic loader (a PT_INTERP program header): such a program cannot run alone in the guest. */
function hasInterpreter(elf: Buffer): boolean {
  const [at, count, size] = [Number(elf.readBigUInt64LE(32)), elf.readUInt16LE(56), elf.readUInt16LE(54)]
  for (let i = 0; i < count; i++) if (elf.readUInt32LE(at + i * size) === 3) return true
  return false
}

function applets(): string[] {
  return execFileSync(BUSYBOX, ['--list'], { encoding: 'utf8' })
    .split('\n')
    .filter((name) => name && name !== 'busybox')
}

/** The modules named and everything they depend on (each module's `depends=`), dependencies first. */
function moduleFiles(root: string, wanted: readonly string[]): Array<{ name: string; path: string }> {
  const files = new Map<string, string>()
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name))
      else if (entry.name.endsWith('.ko')) files.set(canonical(basename(entry.name, '.ko')), join(dir, entry.name))
    }
  }
  walk(root)
  const order: Array<{ name: string; path: string }> = []
  const visit = (name: string): void => {
    if (order.some((m) => canonical(m.name) === canonical(name))) return
    const path = files.get(canonical(name))
    if (!path) throw new MachineUnavailableError(`the kernel package has no module ${name} under ${root}`, { tool: 'kernel' })
    for (const dep of dependsOf(path)) visit(dep)
    order.push({ name: basename(path, '.ko'), path })
  }
  for (const name of wanted) visit(name)
  return order
}

/** Module names are the same with `-` or `_`. */
const canonical = (name: string) => name.replaceAll('-', '_')

function dependsOf(path: string): string[] {
  const field = /\0depends=([^\0]*)\0/.exec(readFileSync(path).toString('latin1'))?.[1]
  return field ? field.split(',').filter(Boolean) : []
}
