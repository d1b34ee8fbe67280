import { useEffect, useState } from 'preact/hooks'
import { view } from './api.js'

export type Loaded<T> = { state: 'loading' } | { state: 'error'; message: string } | { state: 'ok'; data: T }

/**
 * A view's answer for these parameters, fetched again when they change, and every `pollMs`
 * when given: an answer equal to the one shown changes nothing (no new layout, no redraw).
 */
export function useView<T>(name: string, params: Record<string, string | number | undefined> = {}, pollMs?: number): Loaded<T> {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' })
  const key = JSON.stringify([name, params])
  useEffect(() => {
    let live = true
    let shown = ''
    const show = (next: Loaded<T>) => {
      const text = JSON.stringify(next)
      if (live && text !== shown) setLoaded(next)
      shown = text
    }
    const load = () =>
      view<T>(name, params).then(
        (data) => show({ state: 'ok', data }),
        (err: unknown) => show({ state: 'error', message: err instanceof Error ? err.message : String(err) }),
      )
    setLoaded({ state: 'loading' })
    void load()
    const timer = pollMs === undefined ? undefined : setInterval(() => void load(), pollMs)
    return () => {
      live = false
      clearInterval(timer)
    }
  }, [key])
  return loaded
}
