import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { DemoContext } from './DemoContext.js'

/** A small project an agent might be working on: a function with a failing test. */
export const DEMO_PROJECT: Record<string, string> = {
  'package.json': '{ "name": "calc", "type": "module", "scripts": { "test": "node test.js" } }\n',
  'calc.js': 'export function add(a, b) {\n  return a - b // bug: should add\n}\n',
  'test.js': "import { add } from './calc.js'\nif (add(2, 3) !== 5) { console.error('add(2, 3) should be 5'); process.exit(1) }\nconsole.log('ok')\n",
  'README.md': '# calc\n',
}

/** The workspace the later demo steps keep working in. */
export function demoWorkspace(ctx: DemoContext): string {
  return join(ctx.root, 'workspace')
}

/** Snapshot, change, snapshot, log, diff, checkout elsewhere, prove identical. */
export async function storeDemo(ctx: DemoContext): Promise<void> {
  const lib = await import('../../index.js')
  const ws = demoWorkspace(ctx)
  ctx.say('Snapshot a workspace')
  for (const [rel, text] of Object.entries(DEMO_PROJECT)) {
    await fs.mkdir(join(ws, rel, '..'), { recursive: true })
    await fs.writeFile(join(ws, rel), text)
  }
  await fs.mkdir(join(ws, 'notes'))
  await fs.symlink('README.md', join(ws, 'DOCS.md'))
  await lib.initWorkspace({ dir: ws })
  const first = await lib.snapshotWorkspace({ dir: ws, message: 'initial project', agent: 'demo-agent' })
  ctx.show(`snapshot ${first.id}\n(${first.files} files, an empty dir and a symlink)`)

  ctx.say('Change it and snapshot again')
  await fs.appendFile(join(ws, 'README.md'), '\nA tiny calculator.\n')
  await fs.writeFile(join(ws, 'notes', 'plan.md'), '- fix add()\n')
  await fs.rm(join(ws, 'package.json'))
  const st = await lib.status({ dir: ws })
  ctx.show(st.changes.map((c) => `${c.status.padEnd(8)} ${c.path}`).join('\n'))
  const second = await lib.snapshotWorkspace({ dir: ws, message: 'notes, readme', agent: 'demo-agent', tag: 'v2' })
  ctx.show(`snapshot ${second.id}\n(read ${second.hashedFiles} of ${second.files} files; the stat cache vouches for files it saw unchanged)`)
  const again = await lib.snapshotWorkspace({ dir: ws, message: 'nothing new' })
  ctx.check(!again.created && again.id === second.id, 'snapshotting an unchanged workspace writes nothing and returns the same id')

  ctx.say('History and diff')
  const { store } = await lib.openStore({ dir: ws })
  const history = await lib.log({ store })
  ctx.show(history.map((e) => `${e.id.slice(7, 19)} ${e.message}${e.refs.length ? ` (${e.refs.join(', ')})` : ''}`).join('\n'))
  const diff = await lib.diffSnapshots({ dir: ws, a: first.id, b: second.id })
  ctx.show(diff.changes.map((c) => `${c.status.padEnd(8)} ${c.path}`).join('\n'))
  ctx.check(diff.summary.added === 1 && diff.summary.deleted === 1 && diff.summary.modified === 1, 'diff: 1 added, 1 deleted, 1 modified')

  ctx.say('Check the first snapshot out elsewhere and compare')
  const copy = join(ctx.root, 'restored')
  await lib.checkout({ dir: ws, id: first.id.slice(0, 14), into: copy })
  const restored = await (await import('../../world/scan/scanWorkspace.js')).scanWorkspace({ store, dir: copy, write: false })
  ctx.check(restored.tree === first.tree, `restored copy has the identical tree ${first.tree.slice(7, 19)} (bytes, modes, symlink, empty dir)`)
}
