import { useState } from 'preact/hooks'
import type { GraphPage } from '../image/imageGraph.js'
import { GraphCanvas } from './GraphCanvas.js'
import { ImagePanel } from './ImagePanel.js'
import { Loading } from './Loading.js'
import { useView } from './useView.js'

/** How often the graph is read again (new images, moved refs); an unchanged answer is not drawn again. */
const POLL_MS = 5000

/** How many images one page lays out: the newest first, the rest a page away. */
const PAGE = 100

export function ImagesView() {
  const [offset, setOffset] = useState(0)
  const [selected, setSelected] = useState<string | null>(null)
  const graph = useView<GraphPage>('graph', { offset, limit: PAGE }, POLL_MS)
  return (
    <div class="split">
      <section class="graph-pane">
        <Loading loaded={graph}>
          {(page) => (
            <>
              <div class="pager">
                <span data-testid="graph-count">
                  images {page.total === 0 ? 0 : offset + 1}–{offset + page.nodes.length} of {page.total}
                </span>
                <button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
                  newer
                </button>
                <button disabled={offset + PAGE >= page.total} onClick={() => setOffset(offset + PAGE)}>
                  older
                </button>
              </div>
              {page.total === 0 ? (
                <p class="muted">No images yet: `forkpoint snapshot` makes one.</p>
              ) : (
                <GraphCanvas nodes={page.nodes} selected={selected} onSelect={setSelected} />
              )}
            </>
          )}
        </Loading>
      </section>
      <section class="detail-pane">
        {selected ? <ImagePanel key={selected} id={selected} /> : <p class="muted">Click an image for its files, conversation, ledger and changes.</p>}
      </section>
    </div>
  )
}
