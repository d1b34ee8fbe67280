/**
 * Set up before each file of the `unit` vitest project (vitest.config.ts): a unit test that starts a
 * server or spawns the CLI, a service, QEMU or a browser fails at once, naming what it started, so the
 * tier stays runnable without services or root. Short helpers such as `sync` stay allowed. It also removes each
 * file's temporary directories after it: the project runs with `isolate: false`, which imports test/helpers/tmp.ts
 * once a worker.
 */
import childProcess from 'node:child_process'
import { Server } from 'node:net'
import { syncBuiltinESMExports } from 'node:module'
import { basename } from 'node:path'
import { promisify } from 'node:util'
import { afterAll } from 'vitest'
import { removeTempDirs } from './tmp.js'

/** The CLI, Node itself (how the CLI and workers start), the services, and what needs root or namespaces; QEMU by its `qemu-` prefix. */
const FORBIDDEN_PROGRAMS = [
  'forkpoint',
  'node',
  'npx',
  'tsx',
  'docker-registry',
  'redis-server',
  'skopeo',
  'chromium',
  'bwrap',
  'unshare',
  'nsenter',
  'mount',
  'fuse-overlayfs',
  'sudo',
  'runuser',
  'setpriv',
]

class UnitTierViolation extends Error {
  override name = 'UnitTierViolation'
}

function forbidden(command: unknown): boolean {
  if (typeof command !== 'string') return false
  const name = basename(command.split(' ')[0]!)
  return FORBIDDEN_PROGRAMS.includes(name) || name.startsWith('qemu-')
}

type Launcher = 'spawn' | 'spawnSync' | 'execFile' | 'execFileSync' | 'exec' | 'execSync' | 'fork'
type Launch = (...args: unknown[]) => unknown
const launchers: Launcher[] = ['spawn', 'spawnSync', 'execFile', 'execFileSync', 'exec', 'execSync', 'fork']

function guard(launcher: Launcher, launch: Launch): Launch {
  return (...args) => {
    if (launcher === 'fork' || forbidden(args[0])) throw new UnitTierViolation(`unit tier: ${launcher}(${String(args[0])}) starts a process this tier does not run`)
    return launch(...args)
  }
}

/** Set once per process: with `isolate: false` this file runs again before each test file in the same worker. */
const installed = Symbol.for('forkpoint.unitTierGuard')

function installGuard(): void {
  for (const launcher of launchers) {
    const original = childProcess[launcher] as Launch & { [promisify.custom]?: Launch }
    const guarded: Launch & { [promisify.custom]?: Launch } = guard(launcher, original)
    const promised = original[promisify.custom]
    if (promised) guarded[promisify.custom] = guard(launcher, promised)
    ;(childProcess as unknown as Record<Launcher, unknown>)[launcher] = guarded
  }
  syncBuiltinESMExports()
  Server.prototype.listen = function listen(): never {
    throw new UnitTierViolation('unit tier: a test starts a server; services belong to the integration project')
  }
}

const marks = globalThis as { [installed]?: true }
if (!marks[installed]) {
  installGuard()
  marks[installed] = true
}

afterAll(removeTempDirs)
