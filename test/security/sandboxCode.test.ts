import { spawn } from 'node:child_process'
import { existsSync, promises as fs, readFileSync, readdirSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { describe, expect, it } from 'vitest'
import { runWithEffects } from '../../src/effects/runWithEffects.js'
import { Workspace } from '../../src/index.js'
import { startService } from '../../src/service/httpService.js'
import { createMcpServer } from '../../src/service/mcpServer.js'
import { CLI, fp, fpJson } from '../helpers/cli.js'
import { PLANT, fpAsNobody, giveToNobody, plainPlanted, planted } from '../helpers/privilegedModes.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { pollFor } from '../helpers/until.js'

describe('nothing privileged comes out of sandboxed work', () => {
  const root = process.getuid?.() === 0
  const plain = plainPlanted()

  /** A workspace with its store, as the CLI makes one. */
  const workspace = async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a\n' })
    expect((await fp(dir, 'init')).code).toBe(0)
    return dir
  }

  it('forkpoint run: no setuid, setgid or sticky bit, no FIFO, no foreign owner is left in the workspace', async () => {
    const dir = await workspace()
    const r = await fp(dir, 'run', '--', 'sh', '-c', PLANT)
    expect(r.code).toBe(0)
    expect(await planted(dir)).toEqual(plain)
    expect(r.stderr).toMatch(/cleared the setuid, setgid or sticky bit of s/)
    expect(r.stderr).toMatch(/removed f, a FIFO or device node/)
  })

  it.runIf(root)("forkpoint run and run --branch as nobody: nobody's sandbox leaves no setuid file or FIFO either", async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a\n' })
    giveToNobody(dir)
    expect((await fpAsNobody(dir, 'init')).code).toBe(0)
    const r = await fpAsNobody(dir, 'run', '--', 'sh', '-c', PLANT)
    expect([r.code, r.stderr]).toEqual([0, expect.stringMatching(/cleared the setuid/)])
    expect(await planted(dir)).toEqual(plainPlanted(65534))
    await fs.rm(join(dir, 's'))
    expect((await fpAsNobody(dir, 'branch', 'attempt')).code).toBe(0)
    expect((await fpAsNobody(dir, 'run', '--branch', 'attempt', '--', 'sh', '-c', 'cp /usr/bin/id s; chmod 6755 s')).code).toBe(0)
    const { branches } = JSON.parse((await fpAsNobody(dir, 'branch', '--list', '--json')).stdout) as { branches: Array<{ path: string }> }
    expect((await planted(branches[0]!.path)).s).toEqual(plainPlanted(65534).s)
    expect((await fpAsNobody(dir, 'commit', 'attempt')).code).toBe(0)
    expect((await planted(dir)).s).toEqual(plainPlanted(65534).s)
  })

  it('run --branch, on the branch as every tool sees it, then commit: plain files; a host mount is nosuid,nodev', async () => {
    const dir = await workspace()
    const made = await fpJson<{ path: string; view: string }>(dir, 'branch', 'attempt')
    expect([made.code, made.json.view]).toEqual([0, root ? 'host' : expect.any(String)])
    const r = await fp(dir, 'run', '--branch', 'attempt', '--', 'sh', '-c', PLANT)
    expect(r.code).toBe(0)
    if (made.json.view === 'host') {
      expect(await planted(made.json.path)).toEqual(plain)
      const options = readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .find((l) => l.split(' ')[4] === made.json.path)
      expect(options?.split(' ')[5]?.split(',')).toEqual(expect.arrayContaining(['nosuid', 'nodev']))
    }
    expect((await fp(dir, 'commit', 'attempt')).code).toBe(0)
    expect(await planted(dir)).toEqual(plain)
  })

  it('commit: a setuid file put in a branch by any means arrives without the bit, owned by the committer', async () => {
    await using ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a\n' }) })
    const branch = await ws.branch('attempt')
    await fs.copyFile('/usr/bin/id', join(branch.path, 'g'))
    await fs.chmod(join(branch.path, 'g'), 0o6755)
    await fs.mkdir(join(branch.path, 'd'))
    await fs.chmod(join(branch.path, 'd'), 0o3777)
    await branch.commit()
    const after = await planted(ws.dir)
    expect([after.g, after.d]).toEqual([plain.g, plain.d])
  })

  it('explore: the attempt committed leaves plain files', async () => {
    const dir = await workspace()
    const r = await fp(dir, 'explore', '-n', '2', '--', 'sh', '-c', PLANT)
    expect([r.code, r.stderr]).toEqual([0, expect.any(String)])
    const after = await planted(dir)
    expect([after.s, after.g, after.d]).toEqual([plain.s, plain.g, plain.d])
  })

  it('the run of MCP and HTTP (runWithEffects), an MCP tools/call and a POST /v1/run leave plain files', async () => {
    const routes: Array<(dir: string) => Promise<unknown>> = [
      (dir) => runWithEffects({ dir, cmd: ['sh', '-c', PLANT] }),
      async (dir) => {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        await createMcpServer({ dir }).connect(serverSide)
        const client = new Client({ name: 'test', version: '1.0.0' })
        await client.connect(clientSide)
        return client.callTool({ name: 'run', arguments: { command: ['sh', '-c', PLANT] } })
      },
      async (dir) => {
        const service = await startService({ dir, watch: false })
        try {
          return await postRun(service.address.slice('unix:'.length), { command: ['sh', '-c', PLANT] })
        } finally {
          await service.close()
        }
      },
    ]
    for (const route of routes) {
      const dir = await workspace()
      await route(dir)
      expect(await planted(dir)).toEqual(plain)
    }
  })

  it.runIf(root)('branch --disk caps what a branch writes (ENOSPC inside), and its disk goes with the branch', async () => {
    const dir = await workspace()
    const made = await fpJson<{ path: string }>(dir, 'branch', 'capped', '--disk', '8M')
    expect(made.code).toBe(0)
    const r = await fp(dir, 'run', '--branch', 'capped', '--', 'sh', '-c', 'head -c 20M /dev/zero > big; echo "exit $?"')
    expect([r.code, r.stdout, r.stderr]).toEqual([0, 'exit 1\n', expect.stringMatching(/No space left on device/)])
    expect((await fs.stat(join(made.json.path, 'big'))).size).toBeLessThan(8 * 2 ** 20)
    expect((await fp(dir, 'abort', 'capped')).code).toBe(0)
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(dir)
  })

  it('branch --disk is refused (exit 2, saying why) where it cannot be held: the copy backend, an unprivileged caller', async () => {
    const dir = await workspace()
    const copy = await fp(dir, 'branch', 'copied', '--backend', 'copy', '--disk', '8M')
    expect([copy.code, copy.stderr]).toEqual([2, expect.stringMatching(/copy backend cannot cap a branch's disk/)])
    if (!root) return
    const mine = await makeWorkspace({ 'a.txt': 'a\n' })
    giveToNobody(mine)
    expect((await fpAsNobody(mine, 'init')).code).toBe(0)
    const asNobody = await fpAsNobody(mine, 'branch', 'capped', '--disk', '8M')
    expect([asNobody.code, asNobody.stderr]).toEqual([2, expect.stringMatching(/--disk needs root/)])
  })

  it('a sandbox started after a SIGKILLed one reaps its cgroups and note, never those of a live one', async () => {
    const dir = await workspace()
    const notes = () => (existsSync(join(dir, '.forkpoint', 'sandboxes')) ? readdirSync(join(dir, '.forkpoint', 'sandboxes')).filter((n) => /^[0-9a-f]{12}\.json$/.test(n)) : [])
    const cgroupsBefore = runCgroups()
    const killed = startLong(dir)
    const killedNote = await pollFor('the first sandbox note', () => notes()[0])
    const killedCgroups = await pollFor('its cgroup', () => (root ? nonEmpty(runCgroups().filter((c) => !cgroupsBefore.includes(c))) : []))
    process.kill(-killed.pid!, 'SIGKILL')
    await new Promise((r) => killed.once('close', r))
    const live = startLong(dir)
    const liveNote = await pollFor('the live sandbox note', () => notes().find((n) => n !== killedNote))
    const liveCgroups = await pollFor('its cgroup', () => (root ? nonEmpty(runCgroups().filter((c) => !cgroupsBefore.includes(c) && !killedCgroups.includes(c))) : []))
    try {
      expect((await fp(dir, 'run', '--memory', '64M', '--', 'true')).code).toBe(0)
      expect(notes()).toEqual([liveNote])
      expect(killedCgroups.filter((c) => existsSync(c))).toEqual([])
      expect(liveCgroups.filter((c) => existsSync(c))).toEqual(liveCgroups)
    } finally {
      process.kill(-live.pid!, 'SIGKILL')
    }
  })
})

/** `forkpoint run` of a long sleep with a memory limit (so a cgroup where one can be had), in its own process group. */
function startLong(dir: string) {
  return spawn(CLI, ['run', '--memory', '64M', '--', 'sleep', '600'], { cwd: dir, detached: true, stdio: 'ignore' })
}

/** Every `forkpoint-*` cgroup under this process's own memory and pids cgroups. */
function runCgroups(): string[] {
  const membership = readFileSync('/proc/self/cgroup', 'utf8')
  return ['memory', 'pids'].flatMap((controller) => {
    const path = membership.match(new RegExp(`^\\d+:[^:]*\\b${controller}\\b[^:]*:(.*)$`, 'm'))?.[1]
    const parent = path === undefined ? null : join('/sys/fs/cgroup', controller, path)
    if (!parent || !existsSync(parent)) return []
    return readdirSync(parent)
      .filter((n) => n.startsWith('forkpoint-'))
      .map((n) => join(parent, n))
  })
}

const nonEmpty = <T>(list: T[]): T[] | undefined => (list.length > 0 ? list : undefined)

/** POST /v1/run on a service's unix socket; the answer's body. */
function postRun(socketPath: string, args: object): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'POST', path: '/v1/run', headers: { 'content-type': 'application/json' } }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => (body += d.toString()))
      res.on('end', () => resolve(body))
    })
    req.on('error', reject)
    req.end(JSON.stringify(args))
  })
}
