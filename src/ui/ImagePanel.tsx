import { useState } from 'preact/hooks'
import type { GraphNode } from '../image/imageGraph.js'
import { FilesTab } from './FilesTab.js'
import { short, when } from './format.js'
import { LayersTab } from './LayersTab.js'
import { LedgerTab } from './LedgerTab.js'
import { Loading } from './Loading.js'
import { Timeline } from './Timeline.js'
import { useView } from './useView.js'

const TABS = ['layers', 'files', 'conversation', 'ledger'] as const
type Tab = (typeof TABS)[number]

/** One image: its meta and layers with sizes, then its file tree, conversation, ledger, or changes against its parent. */
export function ImagePanel({ id }: { id: string }) {
  const image = useView<GraphNode>('image', { id })
  const [tab, setTab] = useState<Tab>('layers')
  return (
    <Loading loaded={image}>
      {(img) => (
        <div class="image-panel" data-testid="image-panel">
          <h2 class="mono">{short(img.id)}</h2>
          <p>{img.message}</p>
          <p class="muted">
            {when(img.createdAt)}
            {img.agent ? ` by ${img.agent}` : ''} · parents: {img.parents.length ? img.parents.map(short).join(', ') : 'none'}
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
          {tab === 'conversation' &&
            (img.layers.some((l) => l.layer === 'trace') ? <Timeline run={img.id} /> : <p class="muted">No trace layer: no run was recorded into this image.</p>)}
          {tab === 'ledger' && <LedgerTab id={img.id} />}
        </div>
      )}
    </Loading>
  )
}
