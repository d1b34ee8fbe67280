import { spawn } from 'node:child_process'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { RegistryAuthError } from '../../errors/index.js'
import { errnoCode, readTextOrNull } from '../../util/fsx.js'

export interface Credentials {
  username: string
  password: string
}

interface DockerConfig {
  auths?: Record<string, { auth?: string; username?: string; password?: string }>
  credHelpers?: Record<string, string>
  credsStore?: string
}

/**
 * Credentials for a registry host, looked up as Docker does: FORKPOINT_REGISTRY_USERNAME /
 * FORKPOINT_REGISTRY_PASSWORD first, then `$DOCKER_CONFIG/config.json` (default
 * `~/.docker/config.json`): a credential helper for the host, an `auths` entry, the
 * default `credsStore`. Null when there are none: anonymous access.
 */
export async function findCredentials(host: string, env: NodeJS.ProcessEnv = process.env): Promise<Credentials | null> {
  const username = env['FORKPOINT_REGISTRY_USERNAME']
  const password = env['FORKPOINT_REGISTRY_PASSWORD']
  if (username && password !== undefined) return { username, password }
  const text = await readDockerConfig(join(env['DOCKER_CONFIG'] ?? join(homedir(), '.docker'), 'config.json'))
  if (text === null) return null
  const config = JSON.parse(text) as DockerConfig
  const helper = config.credHelpers?.[host]
  if (helper) return askHelper(helper, host)
  const entry = config.auths?.[host] ?? config.auths?.[`https://${host}`] ?? config.auths?.[`http://${host}`]
  if (entry?.auth) {
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
  }
  if (entry?.username && entry.password !== undefined) return { username: entry.username, password: entry.password }
  return config.credsStore ? askHelper(config.credsStore, host) : null
}

/** The config file's text; null when there is none, or none this user may read (as Docker, which warns and goes on: a process run as another user keeps HOME). */
async function readDockerConfig(path: string): Promise<string | null> {
  return readTextOrNull(path).catch((err: unknown) => {
    if (errnoCode(err) === 'EACCES' || errnoCode(err) === 'EPERM') return null
    throw err
  })
}

/** Run `docker-credential-NAME get` with the host on stdin; null when it knows no credentials. */
async function askHelper(name: string, host: string): Promise<Credentials | null> {
  const program = `docker-credential-${name}`
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
    const child = spawn(program, ['get'], { stdio: ['pipe', 'pipe', 'ignore'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')))
    child.on('error', (err) => reject(new RegistryAuthError(`credential helper ${program} could not run: ${err.message}`, { program })))
    child.on('close', (c) => resolve({ code: c, stdout: out }))
    child.stdin.end(host)
  })
  if (code !== 0) return null
  const parsed = JSON.parse(stdout) as { Username?: string; Secret?: string }
  return parsed.Username && parsed.Secret !== undefined ? { username: parsed.Username, password: parsed.Secret } : null
}
