import type { LiveBranch, WorkspaceSandboxes } from '../branch/run/liveChanges.js'
import type { RunningSandbox } from '../branch/run/runningSandboxes.js'
import { when } from './format.js'
import { Loading } from './Loading.js'
import { useView } from './useView.js'

/** How often the live branches are read again. */
const POLL_MS = 2000

/**
 * Live branches (a pattern's running candidates, `forkpoint branch` ones) with the paths
 * each changed so far and the sandboxed commands running in each, and the commands running
 * sandboxed in the workspace itself with its changes since HEAD; read again every two seconds.
 */
export function LiveView() {
  const live = useView<{ branches: LiveBranch[]; workspace: WorkspaceSandboxes }>('branches', {}, POLL_MS)
  return (
    <Loading loaded={live}>
      {({ branches, workspace }) => (
        <div class="branches" data-testid="branches">
          {branches.length === 0 && workspace.running.length === 0 && (
            <p class="muted" data-testid="no-branches">
              No live branches or running sandboxes. Branches show here while they live (`forkpoint branch`, speculate, explore), and commands while they run sandboxed, updated
              every {POLL_MS / 1000} s.
            </p>
          )}
          {workspace.running.length > 0 && (
            <section class="branch" data-testid="workspace-sandboxes">
              <h3>
                the workspace itself <span class="muted">· changes since HEAD</span>
              </h3>
              <Running sandboxes={workspace.running} />
              <Changes changes={workspace.changes?.map((c) => ({ path: c.path, kind: c.status })) ?? []} total={workspace.totalChanges} />
            </section>
          )}
          {branches.map((b) => (
            <section key={b.name} class="branch" data-branch={b.name}>
              <h3>
                {b.name}{' '}
                <span class="muted">
                  · {b.backend} · {b.persistent ? 'persistent' : 'owned by a running process'} · since {when(b.createdAt)}
                </span>
              </h3>
              <Running sandboxes={b.running} />
              {b.changes === null ? (
                <p class="error">cannot read its changes: {b.unreadable}</p>
              ) : (
                <Changes changes={b.changes.map((c) => ({ path: c.path, kind: c.type === 'put' ? 'changed' : 'deleted' }))} total={b.totalChanges} />
              )}
            </section>
          ))}
        </div>
      )}
    </Loading>
  )
}

function Running({ sandboxes }: { sandboxes: RunningSandbox[] }) {
  if (sandboxes.length === 0) return null
  return (
    <ul class="running" data-testid="running">
      {sandboxes.map((s) => (
        <li key={s.id}>
          <span class="status">running</span> <span class="mono">{typeof s.command === 'string' ? s.command : s.command.join(' ')}</span>{' '}
          <span class="muted">
            · since {when(s.startedAt)} · pid {s.owner.pid}
          </span>
        </li>
      ))}
    </ul>
  )
}

function Changes({ changes, total }: { changes: Array<{ path: string; kind: string }>; total: number }) {
  if (changes.length === 0) return <p class="muted">no changes yet</p>
  return (
    <ul class="changes">
      {changes.map((c) => (
        <li key={c.path} class={c.kind}>
          <span class="status">{c.kind}</span> <span class="mono">{c.path}</span>
        </li>
      ))}
      {total > changes.length && <li class="muted">and {total - changes.length} more</li>}
    </ul>
  )
}
