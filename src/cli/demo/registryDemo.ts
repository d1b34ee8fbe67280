import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { DemoContext } from './DemoContext.js'
import { demoWorkspace } from './storeDemo.js'

/** Push to a file:// registry (an OCI layout), clone into a second store and directory, prove identical; then push and pull a change. */
export async function registryDemo(ctx: DemoContext): Promise<void> {
  const lib = await import('../../index.js')
  const ws = demoWorkspace(ctx)
  const remote = `file://${join(ctx.root, 'registry')}:handoff`

  ctx.say('Push the image to a registry (an OCI image layout directory)')
  const pushed = await lib.pushImage({ dir: ws, id: 'HEAD', remote })
  ctx.show(
    `pushed ${pushed.id.slice(7, 19)} as ${pushed.remote}:${pushed.tag}\n${pushed.sentObjects} objects, ${pushed.sentBytes} bytes; manifest ${pushed.manifest.slice(0, 19)}…`,
  )

  ctx.say('A teammate clones it into another store and directory')
  const teammate = join(ctx.root, 'teammate')
  const clone = await lib.cloneImage({ remote, store: join(teammate, 'store'), into: join(teammate, 'agent') })
  const { store } = await lib.openStore({ dir: ws })
  const cloned = await (await import('../../world/scan/scanWorkspace.js')).scanWorkspace({ store, dir: clone.into, write: false })
  const head = await (await import('../../world/tree/readObjects.js')).readSnapshot(store, pushed.id)
  ctx.check(clone.id === pushed.id && cloned.tree === head.world.tree, `the clone has the identical snapshot and tree ${head.world.tree.slice(7, 19)}`)

  ctx.say('Change one file, push again: only the difference travels')
  await fs.writeFile(join(ws, 'calc.js'), 'export function add(a, b) {\n  return a + b\n}\n')
  const fixed = await lib.snapshotWorkspace({ dir: ws, message: 'fix add()', agent: 'demo-agent' })
  const again = await lib.pushImage({ dir: ws, id: fixed.id, remote })
  ctx.show(`sent ${again.sentObjects} of ${again.objects} objects: ${again.sentBytes} bytes with the manifests, for an image of ${again.totalBytes} bytes`)
  const pulled = await lib.pullImage({ store: join(teammate, 'store'), remote })
  ctx.check(pulled.id === fixed.id && pulled.fetchedObjects === again.sentObjects, `the teammate's pull fetched just those ${pulled.fetchedObjects} objects`)
}
