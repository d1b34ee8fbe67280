import { useState } from 'preact/hooks'
import type { ImageChanges } from '../image/imageChanges.js'
import type { GraphNode } from '../image/imageGraph.js'
import { bytes, short } from './format.js'
import { Loading } from './Loading.js'
import { useView } from './useView.js'

/** The layers with their sizes, each against the same layer of a parent (a merge's: either), and the files that changed. */
export function LayersTab({ img }: { img: GraphNode }) {
  const [parent, setParent] = useState(img.parents[0])
  const changes = useView<ImageChanges>('changes', { id: img.id, parent })
  return (
    <>
      {img.parents.length > 1 && (
        <div class="tabs" data-testid="parents">
          against
          {img.parents.map((p, i) => (
            <button key={p} class={p === parent ? 'active' : ''} onClick={() => setParent(p)} data-parent={i}>
              parent {i + 1}: {short(p)}
            </button>
          ))}
        </div>
      )}
      <table data-testid="layers">
        <thead>
          <tr>
            <th>layer</th>
            <th>object</th>
            <th>size</th>
            <th>against parent</th>
          </tr>
        </thead>
        <tbody>
          {img.layers.map((l) => {
            const change = changes.state === 'ok' ? changes.data.layers.find((c) => c.layer === l.layer) : undefined
            return (
              <tr key={l.layer} data-layer={l.layer}>
                <td>{l.layer}</td>
                <td class="mono">{short(l.id)}</td>
                <td>{l.layer === 'world' ? `${l.files ?? 0} files, ${bytes(l.bytes)}` : bytes(l.bytes)}</td>
                <td>{change === undefined ? '' : !change.changed ? 'same' : change.before === null ? 'added' : (change.summary ?? 'changed')}</td>
              </tr>
            )
          })}
        </tbody>
      </table>
      <Loading loaded={changes}>
        {(c) => (
          <>
            <h3>
              Files changed against {c.parent ? short(c.parent) : 'nothing (a root image)'}: {c.files.total}
            </h3>
            <ul class="changes" data-testid="changed-files">
              {c.files.changes.map((f) => (
                <li key={f.path} class={f.status}>
                  <span class="status">{f.status}</span> <span class="mono">{f.path}</span>
                </li>
              ))}
            </ul>
          </>
        )}
      </Loading>
    </>
  )
}
