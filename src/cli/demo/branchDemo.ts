import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { DemoContext } from './DemoContext.js'

/** Two attempts in copy-on-write branches: one is committed, the other thrown away; one runs sandboxed. */
export async function branchDemo(ctx: DemoContext): Promise<void> {
  const { Workspace } = await import('../../index.js')
  const dir = join(ctx.root, 'branch-demo')
  await fs.mkdir(join(dir, 'src'), { recursive: true })
  await fs.writeFile(join(dir, 'src/app.js'), 'console.log("v1")\n')
  const ws = await Workspace.open({ dir })

  ctx.say('branch the workspace twice, copy-on-write')
  const good = await ws.branch('good-idea')
  const bad = await ws.branch('bad-idea')
  ctx.show(`${good.name} (${good.backend}) at ${good.path}`)
  await fs.writeFile(join(good.path, 'src/app.js'), 'console.log("v2")\n')
  const run = await bad.run('rm -rf src && echo "deleted everything" && echo pwned > /etc/motd-demo 2>/dev/null || true', { net: 'none', timeout: '10s' })
  ctx.show(`sandboxed run in ${bad.name}: ${run.stdout.trim()} (changed: ${run.changedPaths.join(', ')}; ${run.durationMs.toFixed(0)} ms)`)
  ctx.check((await fs.readFile(join(dir, 'src/app.js'), 'utf8')).includes('v1'), 'the workspace is untouched by both branches')

  ctx.say('commit one, abort the other')
  const result = await good.commit()
  await bad.abort()
  ctx.show(`committed ${result.name}: ${result.written.join(', ')} in ${result.durationMs.toFixed(0)} ms`)
  ctx.check((await fs.readFile(join(dir, 'src/app.js'), 'utf8')).includes('v2'), 'the workspace has the committed change')
  ctx.check((await ws.branches()).length === 0, 'nothing is left of either branch')
}
