import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FanoutTopology } from '../helpers/fanoutTopology.js'
import { until } from '../helpers/until.js'
import { processesWith } from '../patterns/leftovers.js'
import { tempDir } from '../helpers/tmp.js'
import { fp } from '../helpers/cli.js'

interface OutcomeJson {
  committed: boolean
  winner?: number
  results: Array<{ index: number; status: string; worker?: string; image?: string; error?: string }>
}

let lan: FanoutTopology

beforeAll(async () => {
  lan = await FanoutTopology.start()
  for (const name of ['w1', 'w2', 'w3']) await lan.startWorker(name, { args: ['--lock-duration', '3000', '--stalled-interval', '1000'] })
}, 180_000)

afterAll(async () => {
  await lan?.stop()
})

async function workspace(): Promise<string> {
  const dir = tempDir('fanout-ws')
  writeFileSync(join(dir, 'notes.md'), 'v1\n')
  expect((await fp(dir, 'init')).code).toBe(0)
  return dir
}

const fanout = () => ['--queue', lan.queue, '--registry', lan.registry, '--insecure', '--json']
const outcome = (stdout: string) => JSON.parse(stdout) as OutcomeJson
/** The queue holds no job any more (waiting, active, delayed, completed or failed). */
const jobsLeft = () => lan.redis('--scan', '--pattern', 'bull:forkpoint:????????????????-*').split('\n').filter(Boolean)
/** Live branches on a worker's host. */
const branchesOn = (cache: string) => readdirSync(join(cache, '.forkpoint', 'branches', 'live')).filter((n) => !n.startsWith('.'))

describe('fan-out across hosts (each worker its own network namespace)', () => {
  it('explore: attempts run on several workers, the best success is pulled and committed, nothing is left', async () => {
    const dir = await workspace()
    const r = await lan.forkpoint(
      dir,
      'explore',
      '-n',
      '6',
      ...fanout(),
      '--score',
      'cat score',
      '--',
      'sleep 0.3; echo $FORKPOINT_ATTEMPT > score; echo "by $FORKPOINT_ATTEMPT" > notes.md',
    )
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const o = outcome(r.stdout)
    expect(o.committed).toBe(true)
    expect(o.winner).toBe(5)
    expect(readFileSync(join(dir, 'notes.md'), 'utf8')).toBe('by 5\n')
    expect(o.results.map((x) => x.status)).toEqual(Array(6).fill('succeeded'))
    expect(new Set(o.results.map((x) => x.worker)).size).toBeGreaterThanOrEqual(2)
    expect(jobsLeft()).toEqual([])
    for (const w of lan.workers) expect(branchesOn(w.cache)).toEqual([])
  }, 180_000)

  it('speculate: the first success wins and the losers on other hosts are killed at once', async () => {
    const dir = await workspace()
    const marker = `sleep 300.${process.pid}1`
    const r = await lan.forkpoint(
      dir,
      'speculate',
      ...fanout(),
      '-c',
      `${marker}; echo slow > notes.md`,
      '-c',
      `${marker}; echo slow > notes.md`,
      '-c',
      'sleep 0.5; echo fast > notes.md',
    )
    expect(r.code).toBe(0)
    const o = outcome(r.stdout)
    expect(o.winner).toBe(2)
    expect(o.results.map((x) => x.status)).toEqual(['cancelled', 'cancelled', 'succeeded'])
    expect(readFileSync(join(dir, 'notes.md'), 'utf8')).toBe('fast\n')
    // the submitter returns once every job has ended: the losers' processes are gone already, their branches too
    expect(processesWith(marker)).toEqual([])
    for (const w of lan.workers) expect(branchesOn(w.cache)).toEqual([])
    expect(jobsLeft()).toEqual([])
  }, 180_000)

  it('a host joining and leaving the LAN does not move the hub’s address under the others (their ARP caches hold it)', () => {
    const address = () => /link\/ether (\S+)/.exec(lan.hubSync(['ip', '-o', 'link', 'show', 'br0']).stdout)![1]
    const before = address()
    // a port whose address sorts below every other: a bridge left to itself would take it, then lose it
    lan.hubSync(['ip', 'link', 'add', 'vlow', 'address', '02:00:00:00:00:01', 'type', 'veth', 'peer', 'name', 'vlowpeer'])
    lan.hubSync(['ip', 'link', 'set', 'vlow', 'master', 'br0'])
    expect(address()).toBe(before)
    lan.hubSync(['ip', 'link', 'del', 'vlow'])
    expect(address()).toBe(before)
  })

  it('a worker killed mid-job: its job is run again by another worker, once to completion', async () => {
    const dir = await workspace()
    const marker = `sleep 20.${process.pid}2`
    let victim: string | null = null
    const submit = lan.spawnInHub(
      [
        process.execPath,
        join(import.meta.dirname, '..', '..', 'bin', 'forkpoint'),
        'explore',
        '-n',
        '1',
        '--queue',
        lan.queue,
        '--registry',
        lan.registry,
        '--insecure',
        '--',
        `${marker}; echo done > notes.md`,
      ],
      {
        cwd: dir,
        lines: (line) => {
          const running = /#0 running on (w\d)/.exec(line)
          if (running && victim === null) {
            victim = running[1]!
            const pid = lan.workers.find((w) => w.name === victim)!.pid()
            if (pid === null) throw new Error(`no process for worker ${victim}`)
            process.kill(pid, 'SIGKILL')
          }
        },
      },
    )
    const r = await submit.done
    expect(victim).not.toBeNull()
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(readFileSync(join(dir, 'notes.md'), 'utf8')).toBe('done\n')
    const survivors = lan.workers.filter((w) => w.name !== victim)
    const group = /exploration ([0-9a-f]{16})/.exec(r.stderr)![1]!
    const completedBy = survivors.filter((w) => w.log().includes(`job ${group}-0 (#0) succeeded`))
    expect(completedBy).toHaveLength(1)
    expect(lan.workers.find((w) => w.name === victim)!.log()).not.toContain(`job ${group}-0 (#0) succeeded`)
    await until(() => processesWith(marker).length === 0, 'the killed worker’s candidate to end')
    expect(jobsLeft()).toEqual([])
  }, 300_000)
})
