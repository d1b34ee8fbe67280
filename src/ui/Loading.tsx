import type { ComponentChildren } from 'preact'
import type { Loaded } from './useView.js'

/** Show a view's data once it is there, else what is happening. */
export function Loading<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (loaded.state === 'loading') return <p class="muted">loading…</p>
  if (loaded.state === 'error') return <p class="error">{loaded.message}</p>
  return <>{children(loaded.data)}</>
}
