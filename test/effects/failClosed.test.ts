import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fp, fpJson, runCli } from '../helpers/cli.js'
import { useCountingServer, workspaceDeferringSend } from '../helpers/countingServer.js'

const mail = useCountingServer()

/** The same POST /send, from four kinds of client: none of them reads HTTP_PROXY or any hook. */
function client(kind: 'node' | 'python' | 'curl' | 'raw', url: string, body: string): string[] {
  const { hostname, port, pathname } = new URL(url)
  const scripts = {
    node: ['node', '-e', `fetch(${JSON.stringify(url)}, { method: 'POST', body: ${JSON.stringify(body)} }).then((r) => console.log('status', r.status))`],
    python: [
      'python3',
      '-c',
      `import urllib.request; r = urllib.request.urlopen(urllib.request.Request(${JSON.stringify(url)}, data=${JSON.stringify(body)}.encode())); print('status', r.status)`,
    ],
    curl: ['sh', '-c', `curl -s -o /dev/null -w 'status %{http_code}\\n' -X POST --data-binary '${body}' ${url}`],
    raw: [
      'python3',
      '-c',
      [
        'import socket',
        `s = socket.create_connection((${JSON.stringify(hostname)}, ${port}))`,
        `body = ${JSON.stringify(body)}.encode()`,
        `s.sendall(b'POST ${pathname} HTTP/1.1\\r\\nHost: ${hostname}:${port}\\r\\nConnection: close\\r\\nContent-Length: ' + str(len(body)).encode() + b'\\r\\n\\r\\n' + body)`,
        "print('status', s.recv(64).split()[1].decode())",
      ].join('\n'),
    ],
  }
  return scripts[kind]
}

const KINDS = ['node', 'python', 'curl', 'raw'] as const

describe('effects fail closed: a sandbox under an effects policy reaches the network only through the proxy', () => {
  it('four racing candidates (Node fetch, Python urllib, curl, a raw socket): nothing during the race, one request on commit, none on abort', async () => {
    const dir = await workspaceDeferringSend()
    for (const [i, kind] of KINDS.entries()) {
      expect((await fp(dir, 'branch', `c${i}`)).code).toBe(0)
      const run = await fp(dir, 'run', '--branch', `c${i}`, '--net', 'host', '--', ...client(kind, mail.url('/send'), 'welcome ada'))
      expect([kind, run.code, run.stdout.trim()]).toEqual([kind, 0, 'status 202'])
    }
    expect(mail.received).toEqual([])

    expect((await fp(dir, 'commit', 'c2')).code).toBe(0)
    expect(mail.received.map((r) => [r.method, r.path, r.body])).toEqual([['POST', '/send', 'welcome ada']])
    for (const loser of ['c0', 'c1', 'c3']) expect((await fp(dir, 'abort', loser)).code).toBe(0)
    expect(mail.received).toHaveLength(1)
  })

  it('explore: each candidate a different client, one request after the winner commits', async () => {
    const dir = await workspaceDeferringSend()
    const byAttempt = KINDS.map((kind, i) => `[ "$FORKPOINT_ATTEMPT" = ${i} ] && exec ${client(kind, mail.url('/send'), 'race').map(shellQuote).join(' ')}`).join('\n')
    const explore = await fp(dir, 'explore', '-n', '4', '--net', 'host', '--', 'sh', '-c', `${byAttempt}\nexit 1`)
    expect(explore.code).toBe(0)
    expect(mail.received.map((r) => r.body)).toEqual(['race'])
  })

  it('refuses a connection that is neither HTTP nor TLS, and says so', async () => {
    const dir = await workspaceDeferringSend()
    const script = [
      'import socket',
      `s = socket.create_connection(('127.0.0.1', ${mail.port()}))`,
      'try:',
      "    s.sendall(b'SSH-2.0-OpenSSH_9.2\\r\\n')",
      "    print('answer', s.recv(64))",
      'except OSError as e:',
      "    print('closed', type(e).__name__)",
    ].join('\n')
    const run = await fp(dir, 'run', '--net', 'host', '--', 'python3', '-c', script)
    expect(run.stdout.trim()).toMatch(/^(answer b''|closed \w+)$/)
    expect(run.stderr).toContain(`warning: a connection to 127.0.0.1:${mail.port()} was refused`)
    expect(mail.received).toEqual([])
  })

  it('gives the sandbox a DNS that answers every name, so requests by name reach the proxy (and are held)', async () => {
    const dir = await workspaceDeferringSend()
    writeFileSync(join(dir, '.forkpoint', 'effects.json'), JSON.stringify({ rules: [{ host: 'mail.example.test:*', method: 'POST', path: '/send', class: 'irreversible' }] }))
    expect((await fp(dir, 'branch', 'named')).code).toBe(0)
    const run = await fp(dir, 'run', '--branch', 'named', '--net', 'host', '--', ...client('node', 'http://mail.example.test:8080/send', 'by name'))
    expect(run.stdout.trim()).toBe('status 202')
    const pending = await fpJson<{ entries: Array<{ tool: string }> }>(dir, 'effects', 'named', '--pending')
    expect(pending.json.entries.map((e) => e.tool)).toEqual(['http POST mail.example.test:8080/send'])
    expect((await fp(dir, 'abort', 'named')).code).toBe(0)
  })

  describe('HTTPS', () => {
    const tls = { dir: '', port: 0, received: [] as string[], close: () => undefined as void }
    beforeAll(async () => {
      tls.dir = mkdtempSync(join(tmpdir(), 'fp-tls-'))
      const made = spawnSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-keyout',
          'key.pem',
          '-out',
          'cert.pem',
          '-days',
          '2',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
        ],
        { cwd: tls.dir, encoding: 'utf8' },
      )
      expect(made.status, made.stderr).toBe(0)
      const server = createServer({ key: readFileSync(join(tls.dir, 'key.pem')), cert: readFileSync(join(tls.dir, 'cert.pem')) }, (req, res) => {
        let body = ''
        req.on('data', (c: Buffer) => (body += c.toString()))
        req.on('end', () => {
          tls.received.push(`${req.method} ${req.url} ${body}`)
          res.end('{"id":"tls-1"}')
        })
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      tls.port = (server.address() as AddressInfo).port
      tls.close = () => void server.close()
    })
    afterAll(() => tls.close())

    it('an HTTPS POST is read by the proxy (its CA is the one the sandbox trusts), held, and sent once on commit', async () => {
      const dir = await workspaceDeferringSend()
      expect((await fp(dir, 'branch', 'secure')).code).toBe(0)
      const url = `https://127.0.0.1:${tls.port}/send`
      for (const kind of ['node', 'curl', 'python'] as const) {
        const run = await fp(dir, 'run', '--branch', 'secure', '--net', 'host', '--', ...client(kind, url, `over tls ${kind}`))
        expect([kind, run.stdout.trim()]).toEqual([kind, 'status 202'])
      }
      expect(tls.received).toEqual([])
      // the commit sends from this side, trusting the server as any client of the host would
      const commit = await runCli(['commit', 'secure'], { cwd: dir, env: { NODE_EXTRA_CA_CERTS: join(tls.dir, 'cert.pem') } })
      expect(commit.code, commit.stderr).toBe(0)
      expect(tls.received.sort()).toEqual(['POST /send over tls curl', 'POST /send over tls node', 'POST /send over tls python'])
    })

    it('run --record --egress reads HTTPS from node, curl and python with the store CA, and the replay serves it with nothing sent', async () => {
      const dir = await workspaceDeferringSend()
      const url = `https://127.0.0.1:${tls.port}/status`
      const script = `curl -s ${url}; echo; node -e 'fetch("${url}").then((r) => r.text()).then(console.log)'; python3 -c 'import urllib.request; print(urllib.request.urlopen("${url}").read().decode())'`
      const trustServer = { NODE_EXTRA_CA_CERTS: join(tls.dir, 'cert.pem') }
      const before = tls.received.length
      const recorded = await runCli(['run', '--record', '--egress', '--', 'sh', '-c', script], { cwd: dir, env: trustServer })
      expect(recorded.code, recorded.stderr).toBe(0)
      expect(recorded.stdout.match(/tls-1/g)).toHaveLength(3)
      expect(tls.received.length - before).toBe(3)
      const replay = await runCli(['replay', 'latest'], { cwd: dir })
      expect(replay.code, replay.stderr).toBe(0)
      expect(replay.stdout.match(/tls-1/g)).toHaveLength(3)
      expect(tls.received.length - before).toBe(3)
    })

    it("the sandbox trusts only the store's CA: it cannot read the CA's key, and a server's own certificate is not what it sees", async () => {
      const dir = await workspaceDeferringSend()
      const run = await fp(
        dir,
        'run',
        '--net',
        'host',
        '--',
        'sh',
        '-c',
        `cat ${join(dir, '.forkpoint', 'ca', 'ca-key.pem')} 2>&1 | head -c 40; echo; echo | openssl s_client -connect 127.0.0.1:${tls.port} 2>&1`,
      )
      expect(run.stdout).not.toContain('PRIVATE KEY')
      expect(run.stdout).toMatch(/i:CN = forkpoint effects proxy CA/)
      expect(run.stdout).toMatch(/Verify return code: 0 \(ok\)/)
    })
  })
})

describe('recording through the egress proxy: any client is recorded, and its replay sends nothing', () => {
  it('run --record --egress: Node fetch, Python urllib, curl and a raw socket speaking HTTP are recorded as steps; replays send 0 requests', async () => {
    const dir = await workspaceDeferringSend()
    for (const kind of KINDS) {
      const run = await fp(dir, 'run', '--json', '--record', '--egress', '--', ...client(kind, mail.url('/send'), `recorded ${kind}`))
      const recorded = JSON.parse(run.stdout) as { steps: number; exitCode: number; warnings: string[] }
      expect([kind, recorded.steps, recorded.exitCode, recorded.warnings]).toEqual([kind, 1, 0, []])
    }
    // in the workspace the policy sends at once
    expect(mail.received.map((r) => r.body).sort()).toEqual(['recorded curl', 'recorded node', 'recorded python', 'recorded raw'])
    const { runs } = (await fpJson<{ runs: Array<{ runId: string }> }>(dir, 'runs')).json
    expect(runs).toHaveLength(4)
    for (const { runId } of runs) {
      const replay = await fp(dir, 'replay', runId)
      expect([runId, replay.code], replay.stderr).toEqual([runId, 0])
    }
    expect(mail.received).toHaveLength(4)
  })

  it('replay serves what the recording holds to every client, and a request it does not hold diverges without reaching the network', async () => {
    const dir = await workspaceDeferringSend()
    const get = `curl -s ${mail.url('/status')}; echo; python3 -c 'import urllib.request; print(urllib.request.urlopen("${mail.url('/status')}").read().decode())'`
    const recorded = await fp(dir, 'run', '--record', '--egress', '--', 'sh', '-c', get)
    expect(recorded.stdout).toContain('{"id":"msg-1"}\n{"id":"msg-2"}')
    const replay = await fp(dir, 'replay', 'latest')
    expect(replay.code, replay.stderr).toBe(0)
    expect(replay.stdout).toContain('{"id":"msg-1"}\n{"id":"msg-2"}')
    const other = await fp(dir, 'replay', 'latest', '--', 'sh', '-c', `curl -s ${mail.url('/other')}`)
    expect(other.code).toBe(3)
    expect(mail.received).toHaveLength(2)
  })

  it('a connection that is neither HTTP nor TLS is refused while recording, and said', async () => {
    const dir = await workspaceDeferringSend()
    const script = `import socket; s = socket.create_connection(("127.0.0.1", ${mail.port()})); s.sendall(bytes([0, 1, 2, 3]) * 4); print(repr(s.recv(16)))`
    const run = await fp(dir, 'run', '--record', '--egress', '--', 'python3', '-c', script)
    expect(run.stdout).toContain("b''")
    expect(run.stderr).toContain(`warning: a connection to 127.0.0.1:${mail.port()} was refused`)
    expect(mail.received).toEqual([])
  })
})

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`
}
