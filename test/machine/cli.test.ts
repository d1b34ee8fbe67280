import { afterAll, describe, expect, it } from 'vitest'
import { type CliResult, runCli } from '../helpers/cli.js'
import { KERNEL_CACHE, MACHINE_TIMEOUT, killAllMachines, processAlive } from '../helpers/machines.js'
import { tempDir } from '../helpers/tmp.js'

/** The CLI's machines are detached (they outlive each command): killed through the API after, whatever happened. */
let dir: string | undefined
afterAll(async () => {
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

const env = { XDG_CACHE_HOME: KERNEL_CACHE }
const fp = (cwd: string, ...args: string[]): Promise<CliResult> => runCli(args, { cwd, env })

async function fpJson<T>(cwd: string, ...args: string[]): Promise<T> {
  const r = await fp(cwd, ...args, '--json')
  if (r.code !== 0) throw new Error(`forkpoint ${args.join(' ')} exited ${r.code}:\n${r.stdout}\n${r.stderr}`)
  return JSON.parse(r.stdout) as T
}

interface Machine {
  id: string
  pid: number
  running: boolean
  from: string | null
  head: string | null
}

const short = (id: string) => id.slice('sha256:'.length, 'sha256:'.length + 12)

describe('forkpoint machine', () => {
  it('doctor, build, start, exec, snapshot, fork -n 2, ls, log --all --graph, diff, stats, kill', { timeout: MACHINE_TIMEOUT * 2 }, async () => {
    dir = tempDir('machine-cli')
    expect((await fp(dir, 'init')).code).toBe(0)

    const doctor = await fp(dir, 'machine', 'doctor')
    expect(doctor.code).toBe(0)
    expect(doctor.stdout).toMatch(/^(tcg|kvm): .+\nQEMU \d+\.\d+/)

    const bad = await fp(dir, 'machine', 'build', 'nope')
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/busybox/)])
    const { image } = await fpJson<{ image: string }>(dir, 'machine', 'build', 'busybox')
    expect(image).toMatch(/^sha256:[0-9a-f]{64}$/)

    const started = await fp(dir, 'machine', 'start', image, '--memory', '128')
    expect(started.code).toBe(0)
    const id = started.stdout.trim()
    expect(id).toMatch(/^m[0-9a-f]{8}$/)

    // the guest command's exit code is the command's; output passes through
    expect(await fp(dir, 'machine', 'exec', id, 'exit 3')).toMatchObject({ code: 3, stdout: '' })
    expect(await fp(dir, 'machine', 'exec', id, 'echo out; echo err >&2')).toMatchObject({ code: 0, stdout: 'out\n', stderr: 'err\n' })
    expect(await fp(dir, 'machine', 'exec', id, 'echo', 'two words', "it's")).toMatchObject({ code: 0, stdout: "two words it's\n" })
    expect((await fp(dir, 'machine', 'exec', id, 'echo parent > /data/who; sync')).code).toBe(0)
    expect((await fp(dir, 'machine', 'exec', 'm00000000', 'true')).code).toBe(2)

    const snap = await fp(dir, 'machine', 'snapshot', id, '-m', 'warm')
    expect(snap.code).toBe(0)
    const snapshot = snap.stdout.trim()
    expect(snapshot).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(snap.stderr).toMatch(/paused \d+ ms/)

    expect((await fp(dir, 'machine', 'fork', snapshot, '-n', '0')).code).toBe(2)
    expect((await fp(dir, 'machine', 'fork', snapshot, '-n', 'two')).code).toBe(2)
    expect((await fp(dir, 'machine', 'fork', image, '-n', '1')).code).not.toBe(0) // a machine image is no snapshot
    const { machines: kids } = await fpJson<{ machines: Machine[] }>(dir, 'machine', 'fork', snapshot, '-n', '2')
    expect(kids).toHaveLength(2)
    for (const kid of kids) expect(await fp(dir, 'machine', 'exec', kid.id, 'cat /data/who')).toMatchObject({ code: 0, stdout: 'parent\n' })

    const { machines } = await fpJson<{ machines: Machine[] }>(dir, 'machine', 'ls')
    expect(machines.map((m) => m.id).sort()).toEqual([id, ...kids.map((k) => k.id)].sort())
    expect(machines.find((m) => m.id === id)).toMatchObject({ running: true, from: null, head: snapshot })
    for (const kid of kids) expect(machines.find((m) => m.id === kid.id)).toMatchObject({ running: true, from: snapshot })
    const human = await fp(dir, 'machine', 'ls')
    expect(human.stdout).toContain(`${id}\trunning\t`)
    expect(human.stdout).toContain(`from ${short(snapshot)}`)

    expect((await fp(dir, 'machine', 'exec', kids[0]!.id, 'echo child > /data/who; sync')).code).toBe(0)
    const childSnap = (await fp(dir, 'machine', 'snapshot', kids[0]!.id)).stdout.trim()
    expect(childSnap).toMatch(/^sha256:/)
    const graph = await fp(dir, 'log', '--all', '--graph')
    expect(graph.code).toBe(0)
    const lines = graph.stdout.split('\n')
    const childLine = lines.findIndex((l) => l.includes(short(childSnap)))
    const parentLine = lines.findIndex((l) => l.includes(short(snapshot)))
    expect(childLine).toBeGreaterThanOrEqual(0)
    expect(parentLine).toBeGreaterThan(childLine)
    expect(lines[childLine]).toMatch(new RegExp(`^\\*\\s+${short(childSnap)} \\(machines/${kids[0]!.id}\\)`))
    expect(lines[parentLine]).toMatch(new RegExp(`^\\*\\s+${short(snapshot)} \\(machines/${id}\\) warm`))

    const diff = await fp(dir, 'machine', 'diff', snapshot, childSnap)
    expect(diff.code).toBe(1) // they differ
    expect(diff.stdout).toMatch(/^memory: [1-9]\d* of 32768 pages changed\ndisk: [1-9]\d* of 65536 blocks changed\ndevices: changed/)
    expect(await fp(dir, 'machine', 'diff', snapshot, snapshot)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^memory: 0 of 32768 pages changed/) })

    const stats = await fpJson<{ pid: number; rssBytes: number; pssBytes: number }>(dir, 'machine', 'stats', kids[1]!.id)
    expect(stats.pid).toBe(kids[1]!.pid)
    expect(stats.rssBytes).toBeGreaterThan(0)

    const killed = await fp(dir, 'machine', 'kill', id, ...kids.map((k) => k.id))
    expect(killed.code).toBe(0)
    for (const m of [machines.find((x) => x.id === id)!, ...kids]) expect(processAlive(m.pid)).toBe(false)
    expect((await fpJson<{ machines: Machine[] }>(dir, 'machine', 'ls')).machines).toEqual([])
    expect((await fp(dir, 'machine', 'kill', id)).code).toBe(2)
  })
})
