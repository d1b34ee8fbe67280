import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'

export interface RegistryServer {
  /** `127.0.0.1:PORT` */
  host: string
  /** Where the registry keeps its data (for tests that tamper with blobs). */
  dataDir: string
  blobDataPath(digest: string): string
  stop(): Promise<void>
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/**
 * A real OCI registry (Debian's docker-registry, distribution 2.8) on 127.0.0.1 with its
 * own config and storage in `dir`; with `auth`, htpasswd basic auth for that user.
 */
export async function startRegistry({ dir, auth }: { dir: string; auth?: { username: string; password: string } }): Promise<RegistryServer> {
  const dataDir = join(dir, 'data')
  mkdirSync(dataDir, { recursive: true })
  const port = await freePort()
  const host = `127.0.0.1:${port}`
  let authConfig = ''
  if (auth) {
    const htpasswd = execFileSync('htpasswd', ['-Bbn', auth.username, auth.password], { encoding: 'utf8' })
    writeFileSync(join(dir, 'htpasswd'), htpasswd)
    authConfig = `auth:\n  htpasswd:\n    realm: forkpoint-test\n    path: ${join(dir, 'htpasswd')}\n`
  }
  writeFileSync(
    join(dir, 'config.yml'),
    `version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${dataDir}\n  delete:\n    enabled: true\nhttp:\n  addr: ${host}\n  secret: forkpoint-test-secret\n${authConfig}`,
  )
  const child: ChildProcess = spawn('docker-registry', ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  await waitUntilUp(host, child, () => stderr)
  return {
    host,
    dataDir,
    blobDataPath: (digest) => blobPath(dataDir, digest),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

/** Where distribution keeps a blob's bytes under its data directory. */
export function blobPath(dataDir: string, digest: string): string {
  const hex = digest.replace('sha256:', '')
  return join(dataDir, 'docker/registry/v2/blobs/sha256', hex.slice(0, 2), hex, 'data')
}

async function waitUntilUp(host: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`docker-registry exited: ${stderr()}`)
    const ok = await fetch(`http://${host}/v2/`).then(
      (r) => r.status === 200 || r.status === 401,
      () => false,
    )
    if (ok) return
    await new Promise((r) => setTimeout(r, 50))
  }
  child.kill('SIGKILL')
  throw new Error(`docker-registry did not start on ${host}: ${stderr()}`)
}
