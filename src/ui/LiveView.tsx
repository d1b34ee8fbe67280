import type { LiveBranch } from '../branch/liveChanges.js'
import { when } from './format.js'
import { Loading } from './Loading.js'
import { useView } from './useView.js'

/** How often the live branches are read again. */
const POLL_MS = 2000

/** Live branches (a pattern's running candidates, `forkpoint branch` ones) and the paths each changed so far, read again every two seconds. */
export function LiveView() {
  const live = useView<{ branches: LiveBranch[] }>('branches', {}, POLL_MS)
  return (
    <Loading loaded={live}>
      {({ branches }) =>
        branches.length === 0 ? (
          <p class="muted" data-testid="no-branches">
            No live branches. Branches show here while they live (`forkpoint branch`, speculate, explore), updated every {POLL_MS / 1000} s.
          </p>
        ) : (
          <div class="branches" data-testid="branches">
            {branches.map((b) => (
              <section key={b.name} class="branch" data-branch={b.name}>
                <h3>
                  {b.name}{' '}
                  <span class="muted">
                    · {b.backend} · {b.persistent ? 'persistent' : 'owned by a running process'} · since {when(b.createdAt)}
                  </span>
                </h3>
                {b.changes === null ? (
                  <p class="error">cannot read its changes: {b.unreadable}</p>
                ) : b.changes.length === 0 ? (
                  <p class="muted">no changes yet</p>
                ) : (
                  <ul class="changes">
                    {b.changes.map((c) => (
                      <li key={c.path} class={c.type}>
                        <span class="status">{c.type === 'put' ? 'changed' : 'deleted'}</span> <span class="mono">{c.path}</span>
                      </li>
                    ))}
                    {b.totalChanges > b.changes.length && <li class="muted">and {b.totalChanges - b.changes.length} more</li>}
                  </ul>
                )}
              </section>
            ))}
          </div>
        )
      }
    </Loading>
  )
}
