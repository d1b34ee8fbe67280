import { promises as fs } from 'node:fs'
import type { Command } from 'commander'
import { InputNotFoundError } from '../errors/index.js'

/** The queue's secrets as flags name them: files, never the secrets themselves (a command line is readable by every local user). */
export interface QueueSecretFlags {
  queueKeyFile?: string
  queueCaFile?: string
}

export function withQueueSecrets(cmd: Command): Command {
  return cmd
    .option('--queue-key-file <file>', 'the key jobs are signed with, shared by submitters and workers (default: $FORKPOINT_QUEUE_KEY)')
    .option('--queue-ca-file <file>', 'with rediss://: the CA certificate (PEM) the queue server is checked with (default: the system CAs)')
}

/**
 * The key, the password and the CA a queue connection takes, read here at the edge: the key
 * from `--queue-key-file` or `FORKPOINT_QUEUE_KEY`, the password from `FORKPOINT_QUEUE_PASSWORD`
 * when the URL has none, the CA from `--queue-ca-file`.
 * @throws {UsageError} no key, or a short one @throws {InputNotFoundError} a file that is not there
 */
export async function queueSecrets(flags: QueueSecretFlags, env: NodeJS.ProcessEnv = process.env): Promise<{ key: Buffer; queuePassword?: string; queueCa?: string }> {
  // loaded here, not at start: the job schema brings zod, which every other command would pay for
  const { queueKey } = await import('../fanout/jobSignature.js')
  const key = queueKey(flags.queueKeyFile === undefined ? env['FORKPOINT_QUEUE_KEY'] : await readSecret(flags.queueKeyFile))
  const password = env['FORKPOINT_QUEUE_PASSWORD']
  const ca = flags.queueCaFile === undefined ? undefined : await readSecret(flags.queueCaFile)
  return { key, ...(password ? { queuePassword: password } : {}), ...(ca ? { queueCa: ca } : {}) }
}

async function readSecret(path: string): Promise<string> {
  try {
    return await fs.readFile(path, 'utf8')
  } catch {
    throw new InputNotFoundError(`cannot read ${path}`, { path })
  }
}
