import { promises as fs } from 'node:fs'
import { InputNotFoundError } from '../errors/index.js'
import { queueKey } from './jobSignature.js'

/** The queue's secrets as a caller names them: files, never the secrets themselves (a command line is readable by every local user). */
export interface QueueSecretFiles {
  queueKeyFile?: string | undefined
  queueCaFile?: string | undefined
}

/**
 * The key, the password and the CA a queue connection takes: the key from `queueKeyFile` or
 * `FORKPOINT_QUEUE_KEY`, the password from `FORKPOINT_QUEUE_PASSWORD` when the URL has none,
 * the CA from `queueCaFile`.
 * @throws {UsageError} no key, or a short one @throws {InputNotFoundError} a file that is not there
 */
export async function queueSecrets(files: QueueSecretFiles, env: NodeJS.ProcessEnv): Promise<{ key: Buffer; queuePassword?: string; queueCa?: string }> {
  const key = queueKey(files.queueKeyFile === undefined ? env['FORKPOINT_QUEUE_KEY'] : await readSecret(files.queueKeyFile))
  const password = env['FORKPOINT_QUEUE_PASSWORD']
  const ca = files.queueCaFile === undefined ? undefined : await readSecret(files.queueCaFile)
  return { key, ...(password ? { queuePassword: password } : {}), ...(ca ? { queueCa: ca } : {}) }
}

async function readSecret(path: string): Promise<string> {
  try {
    return await fs.readFile(path, 'utf8')
  } catch {
    throw new InputNotFoundError(`cannot read ${path}`, { path })
  }
}
