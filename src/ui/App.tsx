import { useEffect, useState } from 'preact/hooks'
import { ExplorationsView } from './ExplorationsView.js'
import { ImagesView } from './ImagesView.js'
import { LiveView } from './LiveView.js'
import { RunsView } from './RunsView.js'

const TABS = [
  { id: 'images', label: 'Images', View: ImagesView },
  { id: 'live', label: 'Live branches', View: LiveView },
  { id: 'runs', label: 'Runs', View: RunsView },
  { id: 'explorations', label: 'Explorations', View: ExplorationsView },
] as const

/** The current tab lives in the URL's hash, so a view can be linked to and reloaded. */
function useHashTab(): string {
  const read = () => location.hash.replace(/^#\/?/, '').split('/')[0] || 'images'
  const [tab, setTab] = useState(read)
  useEffect(() => {
    const onChange = () => setTab(read())
    addEventListener('hashchange', onChange)
    return () => removeEventListener('hashchange', onChange)
  }, [])
  return tab
}

export function App() {
  const tab = useHashTab()
  const current = TABS.find((t) => t.id === tab) ?? TABS[0]
  return (
    <>
      <header>
        <h1>forkpoint</h1>
        <nav>
          {TABS.map((t) => (
            <a key={t.id} href={`#/${t.id}`} class={t.id === current.id ? 'active' : ''} data-tab={t.id}>
              {t.label}
            </a>
          ))}
        </nav>
        <span class="readonly">read-only</span>
      </header>
      <main>
        <current.View />
      </main>
    </>
  )
}
