import type { Exploration } from '../patterns/explorations.js'
import { ms, when } from './format.js'
import { Loading } from './Loading.js'
import { useView } from './useView.js'

/** Every recorded exploration (speculate, explore, the patterns): its candidates with status, score and time, and the winner. */
export function ExplorationsView() {
  const explorations = useView<{ explorations: Exploration[] }>('explorations', { limit: 100 })
  return (
    <Loading loaded={explorations}>
      {({ explorations }) =>
        explorations.length === 0 ? (
          <p class="muted">No explorations yet: speculate, explore and the patterns record each run here.</p>
        ) : (
          <>
            {explorations.map((e) => (
              <section key={e.id} class="exploration" data-testid="exploration" data-pattern={e.pattern}>
                <h3>
                  {e.pattern} <span class={`status ${e.status}`}>{e.status}</span>{' '}
                  <span class="muted">
                    {when(e.startedAt)} · {ms(e.durationMs)} · {e.candidates.length} candidates{e.winner !== null ? ` · winner #${e.winner}` : ''}
                  </span>
                </h3>
                {e.error && <p class="error">{e.error}</p>}
                <table>
                  <thead>
                    <tr>
                      <th>#</th>
                      <th>status</th>
                      <th>score</th>
                      <th>time</th>
                      <th>depth</th>
                      <th>error</th>
                    </tr>
                  </thead>
                  <tbody>
                    {e.candidates.map((c) => (
                      <tr key={c.index} class={c.index === e.winner ? 'winner' : ''} data-winner={c.index === e.winner ? 'true' : undefined}>
                        <td>
                          {c.index}
                          {c.index === e.winner ? ' ★' : ''}
                        </td>
                        <td>{c.status}</td>
                        <td>{c.score ?? '–'}</td>
                        <td>{ms(c.durationMs)}</td>
                        <td>{c.depth ?? ''}</td>
                        <td>{c.error ?? ''}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </section>
            ))}
          </>
        )
      }
    </Loading>
  )
}
