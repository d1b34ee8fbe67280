import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { inject } from 'vitest'
import { type MachineRecipe, buildMachineImage, initWorkspace } from '../../src/index.js'
import type { Digest } from '../../src/objects/digest.js'
import { objectEdges } from '../../src/objects/kinds.js'
import { openStore } from '../../src/store/findStore.js'
import { readObjectFile } from '../../src/store/objectGraph.js'
import { updateRef } from '../../src/store/refs.js'
import type { Store } from '../../src/store/Store.js'
import { pollFor } from './until.js'
import './machines.js' // the suite's kernel and package cache, for the build

/** How long a file waits for another file's build of an image: the browser recipe's takes minutes on a busy host. */
const BUILD_WAIT_MS = 20 * 60_000

/**
 * A machine image of `recipe` in workspace `dir`, built once a run for every test file whose
 * subject is not the build itself: the first file to ask builds it in a workspace of the
 * run's own (test/helpers/startMachineImages.ts), the others wait for that build. Each gets
 * the image's objects copied into its own store (copies, not links: a test may damage its
 * store's objects) and on `refs/machine-images/<recipe>`, as `machine build` leaves them.
 */
export async function sharedMachineImage(dir: string, recipe: MachineRecipe): Promise<Digest> {
  const image = (await builtOnce(recipe)) as Digest
  const [from, to] = await Promise.all([openStore({ dir: join(inject('machineImages'), recipe) }), openStore({ dir })])
  copyObjects(from.store, to.store, image)
  await updateRef({ store: to.store, name: `refs/machine-images/${recipe}`, id: image, message: `machine build ${recipe}` })
  return image
}

/** The run's image of `recipe`: built by whichever file claims it first, waited for by the rest. */
async function builtOnce(recipe: MachineRecipe): Promise<string> {
  const root = inject('machineImages')
  const done = join(root, `${recipe}.json`)
  if (claim(join(root, `${recipe}.claimed`))) {
    let outcome: { image: string } | { error: string }
    try {
      const dir = join(root, recipe)
      mkdirSync(dir)
      await initWorkspace({ dir })
      outcome = { image: (await buildMachineImage({ dir, recipe })).image }
    } catch (err) {
      outcome = { error: (err as Error).stack ?? String(err) }
    }
    writeFileSync(`${done}.tmp`, JSON.stringify(outcome))
    renameSync(`${done}.tmp`, done)
  }
  const outcome = await pollFor(
    `the run's ${recipe} image`,
    () => (existsSync(done) ? (JSON.parse(readFileSync(done, 'utf8')) as { image?: string; error?: string }) : undefined),
    BUILD_WAIT_MS,
  )
  if (outcome.image === undefined) throw new Error(`the run's build of the ${recipe} image failed: ${outcome.error}`)
  return outcome.image
}

function claim(path: string): boolean {
  try {
    writeFileSync(path, String(process.pid), { flag: 'wx' })
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
}

/** Copy `digest` and every object it names, transitively, from one store into another. */
function copyObjects(from: Store, to: Store, digest: Digest): void {
  const pending = [digest]
  const seen = new Set<Digest>()
  for (let d = pending.pop(); d !== undefined; d = pending.pop()) {
    if (seen.has(d)) continue
    seen.add(d)
    const source = from.objectPath(d)
    const target = to.objectPath(d)
    if (!existsSync(target)) {
      mkdirSync(join(target, '..'), { recursive: true })
      copyFileSync(source, target)
    }
    const object = readObjectFile(source, d, { hash: false })?.object
    if (object) pending.push(...objectEdges(object))
  }
}
