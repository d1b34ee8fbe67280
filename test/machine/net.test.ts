import { type AddressInfo, createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useCountingServer, workspaceDeferringSend } from '../helpers/countingServer.js'
import { machineCli } from '../helpers/machineCli.js'
import { MACHINE_TIMEOUT, killAllMachines, pollFor } from '../helpers/machines.js'
import { tempDir } from '../helpers/tmp.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

/**
 * Machine networking through the CLI: `--net none|egress`, `--allow`, `--publish`, and a
 * guest's POST under an effects policy deferred in forked children and sent once, by the
 * child committed. Two services on the host's 127.0.0.1, one allowed and one not, count
 * what reaches them; the guest reaches the host's loopback as 10.0.2.2.
 */
const mail = useCountingServer()
const other = useCountingServer()

const dirs: string[] = []
let dir = ''
const { fp, fpJson } = machineCli(() => dir)

afterAll(async () => {
  for (const d of dirs) await killAllMachines(d)
}, MACHINE_TIMEOUT)

/** A guest shell line sending one HTTP request to the host's `port` (10.0.2.2 in the guest), keeping its side open a moment so the answer can come back. */
const guestRequest = (port: number, method: string, path: string, body = '') =>
  `(printf '${method} ${path} HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\nContent-Length: ${body.length}\\r\\n\\r\\n${body}'; sleep 3) | nc -w 20 10.0.2.2 ${port} | head -1`

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('machine networking', { timeout: MACHINE_TIMEOUT * 2 }, () => {
  let image = ''
  beforeAll(async () => {
    dir = tempDir('machine-net')
    dirs.push(dir)
    expect((await fp('init')).code).toBe(0)
    image = await sharedMachineImage(dir, 'busybox')
  }, MACHINE_TIMEOUT)

  it('--net egress --allow: the guest reaches exactly the allowed host:port; --publish serves a guest HTTP server on the host; a --net none child reaches nothing', async () => {
    const published = await freePort()
    const m = (
      await fpJson<{ id: string }>('machine', 'start', image, '--memory', '128', '--net', 'egress', '--allow', `127.0.0.1:${mail.port()}`, '--publish', `${published}:8080`)
    ).id

    const allowed = await fp('machine', 'exec', m, guestRequest(mail.port(), 'GET', '/hello'))
    expect(allowed.stdout).toMatch(/^HTTP\/1\.1 200/)
    expect(mail.received.map((r) => [r.method, r.path])).toEqual([['GET', '/hello']])

    const refused = await fp('machine', 'exec', m, `${guestRequest(other.port(), 'GET', '/nope')}; echo done`)
    expect(refused.stdout).toBe('done\n')
    expect(other.received).toEqual([])

    const serve = await fp('machine', 'exec', m, 'mkdir -p /www && echo hello from the guest > /www/index.html && httpd -p 8080 -h /www')
    expect(serve.code).toBe(0)
    const page = await pollFor('the published page', async () => {
      // an attempt the relay holds open is given up and tried again, as one refused is
      const r = await fetch(`http://127.0.0.1:${published}/`, { signal: AbortSignal.timeout(15_000) }).catch(() => null)
      return r?.ok ? r.text() : undefined
    })
    expect(page).toBe('hello from the guest\n')

    // a child with --net none of a machine with a network keeps the device (its state needs it), leading nowhere
    const snapshot = (await fp('machine', 'snapshot', m)).stdout.trim()
    const { machines } = await fpJson<{ machines: Array<{ id: string }> }>('machine', 'fork', snapshot, '--net', 'none')
    const closed = await fp('machine', 'exec', machines[0]!.id, `ls /sys/class/net; ${guestRequest(mail.port(), 'GET', '/closed')}; echo done`)
    expect(closed.stdout).toBe('eth0\nlo\ndone\n')
    expect(mail.received.map((r) => r.path)).toEqual(['/hello'])
  })

  it('--net none: the guest has no network device and reaches nothing', async () => {
    const m = (await fpJson<{ id: string }>('machine', 'start', image, '--memory', '128')).id
    const devices = await fp('machine', 'exec', m, 'ls /sys/class/net')
    expect(devices.stdout).toBe('lo\n')
    const tried = await fp('machine', 'exec', m, `${guestRequest(mail.port(), 'GET', '/none')}; echo done`)
    expect(tried.stdout).toBe('done\n')
    expect(mail.received).toEqual([])
    expect((await fp('machine', 'start', image, '--allow', `127.0.0.1:${mail.port()}`)).code).toBe(2) // --allow needs --net egress
    const snapshot = (await fp('machine', 'snapshot', m)).stdout.trim()
    expect((await fp('machine', 'fork', snapshot, '--net', 'egress')).code).toBe(2) // its machine has no network device for a child to continue with
  })

  it('a guest POST under an effects policy waits in each forked child and is sent once, when the child is committed', async () => {
    dir = await workspaceDeferringSend()
    dirs.push(dir)
    const own = await sharedMachineImage(dir, 'busybox')
    const allow = ['--net', 'egress', '--allow', `127.0.0.1:${mail.port()}`]
    const parent = (await fpJson<{ id: string }>('machine', 'start', own, '--memory', '128', ...allow)).id
    const snapshot = (await fp('machine', 'snapshot', parent)).stdout.trim()
    expect((await fp('machine', 'fork', snapshot, '-n', '2', ...allow, '--publish', `${await freePort()}:80`)).code).toBe(2) // one host port, one child
    const { machines: kids } = await fpJson<{ machines: Array<{ id: string }> }>('machine', 'fork', snapshot, '-n', '2', ...allow)
    for (const kid of kids) {
      const post = await fp('machine', 'exec', kid.id, guestRequest(mail.port(), 'POST', '/send', 'welcome ada'))
      expect(post.stdout).toMatch(/^HTTP\/1\.1 202/) // the placeholder: deferred
    }
    expect(mail.received).toEqual([])

    const committed = await fpJson<{ effects: { sent: unknown[] } }>('machine', 'commit', kids[0]!.id)
    expect(committed.effects.sent).toHaveLength(1)
    expect(mail.received.map((r) => [r.method, r.path, r.body])).toEqual([['POST', '/send', 'welcome ada']])
    expect((await fp('machine', 'kill', kids[1]!.id)).code).toBe(0)
    expect(mail.received).toHaveLength(1)
  })
})
