import { randomBytes } from 'node:crypto'
import { constants, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { isAlive, self } from './processId.js'

export type Controller = 'memory' | 'pids'

/** A cgroup made for one sandboxed run: the command joins through `procs`; `remove()` once it is over. */
export interface RunCgroup {
  controller: Controller
  dir: string
  procs: string
  /** How many processes the kernel's OOM killer has killed in it (0 for a pids cgroup). */
  oomKills(): Promise<number>
  remove(): Promise<void>
}

const LIMIT_FILES: Record<'v1' | 'v2', Record<Controller, string>> = {
  v2: { memory: 'memory.max', pids: 'pids.max' },
  v1: { memory: 'memory.limit_in_bytes', pids: 'pids.max' },
}

/**
 * A child cgroup holding `limit` for one controller, under this process's own cgroup:
 * cgroup v2 where that controller is delegated to us (enabled for our children and
 * writable), else a writable cgroup v1 hierarchy of the controller (root on a v1/hybrid
 * host). Null when neither is ours to use: the caller falls back to rlimits.
 */
export async function makeRunCgroup(controller: Controller, limit: number): Promise<RunCgroup | null> {
  for (const parent of await candidateParents(controller)) {
    const dir = join(parent.dir, `forkpoint-${self.pid}-${self.start}-${randomBytes(6).toString('hex')}`)
    try {
      await fs.mkdir(dir)
    } catch {
      continue
    }
    try {
      await fs.writeFile(join(dir, LIMIT_FILES[parent.version][controller]), String(limit))
      if (controller === 'memory')
        await fs
          .writeFile(join(dir, parent.version === 'v2' ? 'memory.swap.max' : 'memory.memsw.limit_in_bytes'), parent.version === 'v2' ? '0' : String(limit))
          .catch(() => undefined)
      return { controller, dir, procs: join(dir, 'cgroup.procs'), oomKills: () => oomKillsIn(dir, parent.version, controller), remove: () => removeCgroup(dir) }
    } catch {
      await fs.rmdir(dir).catch(() => undefined)
    }
  }
  return null
}

/** The `oom_kill` counter: `memory.events` on v2, `memory.oom_control` on v1 (Linux 4.13 and later; 0 where it is missing). */
async function oomKillsIn(dir: string, version: 'v1' | 'v2', controller: Controller): Promise<number> {
  if (controller !== 'memory') return 0
  const text = await fs.readFile(join(dir, version === 'v2' ? 'memory.events' : 'memory.oom_control'), 'utf8').catch(() => '')
  return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0)
}

/** A run cgroup's name: its maker's pid and start time, so that one whose maker is gone is known as left over. */
const RUN_CGROUP = /^forkpoint-(\d+)-(\d+)-[0-9a-f]{12}$/

/**
 * Remove the run cgroups that processes which are gone left behind (a CLI killed with
 * SIGKILL cannot remove its own), in every hierarchy this process could make one in. A
 * cgroup whose maker runs is never touched; one that still holds a process stays for the
 * next time (the kernel refuses to remove it).
 */
export async function reapLeftoverCgroups(): Promise<void> {
  const parents = (await Promise.all((['memory', 'pids'] as const).map(candidateParents))).flat()
  await Promise.all(
    parents.map(async ({ dir }) => {
      for (const name of await fs.readdir(dir).catch(() => [])) {
        const maker = RUN_CGROUP.exec(name)
        if (maker && !isAlive({ pid: Number(maker[1]), start: maker[2]! })) await fs.rmdir(join(dir, name)).catch(() => undefined)
      }
    }),
  )
}

type Parent = { dir: string; version: 'v1' | 'v2' }

/** Per controller: this process's cgroup does not change, so its candidates are found once. */
const parentsOf = new Map<Controller, Promise<Parent[]>>()

function candidateParents(controller: Controller): Promise<Parent[]> {
  let found = parentsOf.get(controller)
  if (!found) parentsOf.set(controller, (found = findParents(controller)))
  return found
}

async function findParents(controller: Controller): Promise<Parent[]> {
  const [mountinfo, membership] = await Promise.all([fs.readFile('/proc/self/mountinfo', 'utf8'), fs.readFile('/proc/self/cgroup', 'utf8')])
  const out: Parent[] = []
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ')
    if (!left || !right) continue
    const mountPoint = left.split(' ')[4]!
    const [fstype, , superOptions = ''] = right.split(' ')
    if (fstype === 'cgroup2') {
      const path = membership.match(/^0::(.*)$/m)?.[1]
      const dir = path === undefined ? null : join(mountPoint, path)
      if (dir && (await delegated(dir, controller))) out.push({ dir, version: 'v2' })
    } else if (fstype === 'cgroup' && superOptions.split(',').includes(controller)) {
      const path = membership.match(new RegExp(`^\\d+:[^:]*\\b${controller}\\b[^:]*:(.*)$`, 'm'))?.[1]
      if (path !== undefined && (await writable(join(mountPoint, path)))) out.push({ dir: join(mountPoint, path), version: 'v1' })
    }
  }
  return out.sort((a, b) => (a.version === b.version ? 0 : a.version === 'v2' ? -1 : 1))
}

async function delegated(dir: string, controller: Controller): Promise<boolean> {
  const enabled = await fs.readFile(join(dir, 'cgroup.subtree_control'), 'utf8').catch(() => '')
  return enabled.split(/\s+/).includes(controller) && (await writable(dir))
}

async function writable(dir: string): Promise<boolean> {
  return fs.access(dir, constants.W_OK).then(
    () => true,
    () => false,
  )
}

/** rmdir once the killed processes have left it (the kernel takes a moment to empty it). */
export async function removeCgroup(dir: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await fs.rmdir(dir)
      return
    } catch {
      await new Promise((r) => setTimeout(r, 10))
    }
  }
}
