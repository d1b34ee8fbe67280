import type { EffectsListing } from '../effects/listEffects.js'
import { when } from './format.js'
import { Loading } from './Loading.js'
import { useView } from './useView.js'

/** An image's effects ledger, verified by the service. */
export function LedgerTab({ id }: { id: string }) {
  const ledger = useView<EffectsListing>('ledger', { id })
  return (
    <Loading loaded={ledger}>
      {(l) =>
        l.entries.length === 0 ? (
          <p class="muted">No effects recorded in this image.</p>
        ) : (
          <table data-testid="ledger">
            <thead>
              <tr>
                <th>#</th>
                <th>at</th>
                <th>tool</th>
                <th>class</th>
                <th>status</th>
                <th>idempotency key</th>
              </tr>
            </thead>
            <tbody>
              {l.entries.map((e) => (
                <tr key={e.seq}>
                  <td>{e.seq}</td>
                  <td>{when(e.at)}</td>
                  <td>{e.tool}</td>
                  <td>{e.class}</td>
                  <td>{e.status}</td>
                  <td class="mono">{e.idempotencyKey}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      }
    </Loading>
  )
}
