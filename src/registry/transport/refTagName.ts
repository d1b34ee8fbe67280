import { readHead, readRef } from '../../store/refs.js'
import type { Store } from '../../store/Store.js'
import { assertTag } from './parseRemote.js'

/**
 * The remote tag used when the remote names none: the head or tag the id was given as
 * (`main`, `refs/tags/v1`, `HEAD` following the head `main`), else `latest`. Push asks it of
 * the id pushed, pull and clone of `HEAD`, so `push REMOTE` and `pull REMOTE` on one head meet.
 */
export async function refTagName(store: Store, spec: string): Promise<string> {
  if (spec === 'HEAD') {
    const head = await readHead(store)
    return head.type === 'symbolic' ? assertTag(lastComponent(head.ref)) : 'latest'
  }
  const candidates = spec.startsWith('refs/') ? [spec] : [`refs/heads/${spec}`, `refs/tags/${spec}`]
  for (const name of candidates) {
    if (await readRef(store, name).catch(() => null)) return assertTag(lastComponent(name))
  }
  return 'latest'
}

function lastComponent(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1)
}
