import { closeSync, fsyncSync, writeSync } from 'node:fs'
import { openAppendSync } from '../util/untrustedRead.js'
import { notRegular } from './readObjectBytes.js'
import { readStateTextOrNull } from './readStateFile.js'
import { type Digest, isDigest } from '../objects/digest.js'
import type { Store } from './Store.js'

/**
 * The store's `foreign` file: the images that arrived from another store (by pull, clone
 * or unpack), one id a line. Their history came with them, so an image is foreign when it
 * is one of these or an ancestor of one (`cameFromElsewhere`). Only this store's own pull,
 * clone and unpack write it.
 */
export async function readForeignImages(store: Store): Promise<Set<Digest>> {
  const text = readStateTextOrNull(store.path('foreign'))
  return new Set((text ?? '').split('\n').filter((line): line is Digest => isDigest(line)))
}

/** Record an image that came from elsewhere: a line appended, so writers at once lose none. */
export async function recordForeignImage(store: Store, id: Digest): Promise<void> {
  if ((await readForeignImages(store)).has(id)) return
  const path = store.path('foreign')
  const fd = openAppendSync(path, 0o644, () => notRegular(path))
  try {
    writeSync(fd, `${id}\n`)
    fsyncSync(fd) // lost, the image would pass as this store's own
  } finally {
    closeSync(fd)
  }
}
