import { useState } from 'preact/hooks'
import type { EffectsListing } from '../effects/listEffects.js'
import type { ImageChanges } from '../image/imageChanges.js'
import type { ImageDescription } from '../image/describeImage.js'
import type { LayerSize } from '../image/imageGraph.js'
import type { TreeListing } from '../world/listTree.js'
import { bytes, short, when } from './format.js'
import { Loading } from './Loading.js'
import { Timeline } from './Timeline.js'
import { useView } from './useView.js'

type Image = Omit<ImageDescription, 'object'> & { sizes: LayerSize[] }

const TABS = ['layers', 'files', 'conversation', 'ledger'] as const
type Tab = (typeof TABS)[number]

/** One image: its meta and layers with sizes, then its file tree, conversation, ledger, or changes against its parent. */
export function ImagePanel({ id }: { id: string }) {
  const image = useView<Image>('image', { id })
  const [tab, setTab] = useState<Tab>('layers')
  return (
    <Loading loaded={image}>
      {(img) => (
        <div class="image-panel" data-testid="image-panel">
          <h2 class="mono">{short(img.id)}</h2>
          <p>{img.meta.message}</p>
          <p class="muted">
            {when(img.meta.createdAt)}
            {img.meta.agent ? ` by ${img.meta.agent}` : ''} · parents: {img.parents.length ? img.parents.map(short).join(', ') : 'none'}
          </p>
          <div class="tabs">
            {TABS.map((t) => (
              <button key={t} class={t === tab ? 'active' : ''} onClick={() => setTab(t)} data-tab={t}>
                {t}
              </button>
            ))}
          </div>
          {tab === 'layers' && <LayersTab img={img} />}
          {tab === 'files' && <FilesTab id={img.id} />}
          {tab === 'conversation' && (img.trace ? <Timeline run={img.id} /> : <p class="muted">No trace layer: no run was recorded into this image.</p>)}
          {tab === 'ledger' && <LedgerTab id={img.id} />}
        </div>
      )}
    </Loading>
  )
}

/** The layers with their sizes, each against the same layer of a parent (a merge's: either), and the files that changed. */
function LayersTab({ img }: { img: Image }) {
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
          {img.sizes.map((l) => {
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

function FilesTab({ id }: { id: string }) {
  const [path, setPath] = useState('')
  const tree = useView<TreeListing>('tree', { id, path })
  const up = path.split('/').slice(0, -1).join('/')
  return (
    <Loading loaded={tree}>
      {(t) => (
        <div data-testid="tree">
          <p class="mono">/{t.path}</p>
          <ul class="tree">
            {t.path !== '' && (
              <li>
                <button class="link" onClick={() => setPath(up)}>
                  ..
                </button>
              </li>
            )}
            {t.entries.map((e) => (
              <li key={e.name} class={e.type}>
                {e.type === 'dir' ? (
                  <button class="link" onClick={() => setPath(t.path ? `${t.path}/${e.name}` : e.name)}>
                    {e.name}/
                  </button>
                ) : (
                  <span class="mono">{e.type === 'symlink' ? `${e.name} -> ${e.target ?? ''}` : e.name}</span>
                )}
                {e.type === 'file' && <span class="muted"> {bytes(e.size)}</span>}
              </li>
            ))}
          </ul>
          {t.total > t.entries.length && <p class="muted">and {t.total - t.entries.length} more</p>}
        </div>
      )}
    </Loading>
  )
}

function LedgerTab({ id }: { id: string }) {
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
