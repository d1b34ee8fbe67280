import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { readStateTextOrNull } from '../store/readStateFile.js'
import { SERVICE_TOKEN_FILE } from './serviceNames.js'

/** A new bearer token: 256 random bits. */
export const newServiceToken = (): string => randomBytes(32).toString('base64url')

/** Write the token beside the store, mode 0600; whatever was at that path (a link planted there included) is replaced, never followed. */
export async function writeServiceToken(storeDir: string, token: string): Promise<string> {
  const file = join(storeDir, SERVICE_TOKEN_FILE)
  await fs.rm(file, { force: true })
  await fs.writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' })
  return file
}

/** The token of the store's TCP service, or null when none is written. */
export async function readServiceToken(storeDir: string): Promise<string | null> {
  return readStateTextOrNull(join(storeDir, SERVICE_TOKEN_FILE))?.trim() || null
}
