import { useState } from 'preact/hooks'
import type { TreeListing } from '../world/tree/listTree.js'
import { bytes } from './format.js'
import { Loading } from './Loading.js'
import { useView } from './useView.js'

/** An image's file tree, a directory at a time. */
export function FilesTab({ id }: { id: string }) {
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
