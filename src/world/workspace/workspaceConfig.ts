import type { Store } from '../../store/Store.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'

/** What a workspace remembers between commands, in the store's `config.json`. */
export interface WorkspaceConfig {
  /** Apply .gitignore files too: set by `snapshot --respect-gitignore`, cleared by `--no-respect-gitignore`. */
  respectGitignore?: boolean
}

const CONFIG = 'config.json'

export function readWorkspaceConfig(store: Store): WorkspaceConfig {
  const text = readStateTextOrNull(store.path(CONFIG))
  try {
    const parsed = text === null ? {} : (JSON.parse(text) as unknown)
    return typeof parsed === 'object' && parsed !== null ? parsed : {}
  } catch {
    return {} // unreadable: the defaults, as if never set
  }
}

/**
 * Whether scans apply .gitignore: as asked this time, else as remembered. A snapshot
 * that asks remembers the answer, so a later `status` sees what the snapshot saw.
 */
export async function respectGitignore(store: Store, asked: boolean | undefined, { remember }: { remember: boolean }): Promise<boolean> {
  const config = readWorkspaceConfig(store)
  if (asked === undefined) return config.respectGitignore ?? false
  if (remember && config.respectGitignore !== asked) await atomicWrite(store.path(CONFIG), `${JSON.stringify({ ...config, respectGitignore: asked }, null, 2)}\n`)
  return asked
}
