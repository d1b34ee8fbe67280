import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import { freePort } from './registryServer.js'

/**
 * An address of this machine that is not loopback (the registry client speaks plain HTTP to
 * loopback, as Docker does, so HTTPS needs another), or undefined on a machine with none.
 */
export function nonLoopbackAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address
}

export interface TestCa {
  /** The CA's certificate: what NODE_EXTRA_CA_CERTS names. */
  caFile: string
  certFile: string
  keyFile: string
}

/** A private CA and a server certificate it signed for `ip`, made with openssl in `dir`. */
export function makeTestCa(dir: string, ip: string): TestCa {
  mkdirSync(dir, { recursive: true })
  const at = (name: string) => join(dir, name)
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' })
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  ssl('req', '-x509', ...key, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=forkpoint test CA')
  ssl('req', ...key, '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${ip}`)
  writeFileSync(at('server.ext'), `subjectAltName=IP:${ip}\n`)
  ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'server.ext')
  return { caFile: at('ca.crt'), certFile: at('server.crt'), keyFile: at('server.key') }
}

export interface TlsRegistry {
  /** `IP:PORT` */
  host: string
  stop(): Promise<void>
}

/** A real OCI registry (Debian's docker-registry) serving HTTPS on `ip` with a certificate of `ca`. */
export async function startTlsRegistry({ dir, ip, ca }: { dir: string; ip: string; ca: TestCa }): Promise<TlsRegistry> {
  const host = `${ip}:${await freePort()}`
  writeFileSync(
    join(dir, 'config.yml'),
    `version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, 'data')}\nhttp:\n  addr: ${host}\n  secret: forkpoint-test-secret\n  tls:\n    certificate: ${ca.certFile}\n    key: ${ca.keyFile}\n`,
  )
  const child: ChildProcess = spawn('docker-registry', ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  const deadline = Date.now() + 30_000
  while (!(await answers(host, readFileSync(ca.caFile)))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`docker-registry did not start on https://${host}: ${stderr}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    host,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

function answers(host: string, ca: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(`https://${host}/v2/`, { ca }, (res) => {
      res.resume()
      resolve(res.statusCode === 200)
    })
    req.on('error', () => resolve(false))
    req.end()
  })
}
