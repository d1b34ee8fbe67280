import type { Store } from '../store/Store.js'
import { Workspace } from './Workspace.js'

/** How the CLI names a workspace: a directory, and optionally its store. */
export interface WorkspaceRef {
  dir?: string
  store?: string | Store | undefined
}

/** Open the workspace a CLI-style call names. */
export function openWorkspace({ dir = process.cwd(), store }: WorkspaceRef): Promise<Workspace> {
  return Workspace.open(dir, { store: typeof store === 'string' ? store : store?.root })
}
