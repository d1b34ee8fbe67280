import { type Stats, promises as fs } from 'node:fs'
import { InputNotFoundError } from '../errors/index.js'
import { errnoCode } from './fsx.js'

/** `stat` of a path the user named: one that is not there is their mistake (exit 2), not ours. */
export async function statInput(path: string): Promise<Stats> {
  try {
    return await fs.stat(path)
  } catch (err) {
    if (['ENOENT', 'ENOTDIR'].includes(errnoCode(err) ?? '')) throw new InputNotFoundError(`${path}: no such file or directory`, { path })
    throw err
  }
}
