import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../helpers/cli.js'

/** scripts/buildNative.mjs with a node-gyp that cannot run (as on a machine without one). */
function buildWithoutNodeGyp(...args: string[]) {
  return spawnSync(process.execPath, ['scripts/buildNative.mjs', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, npm_config_node_gyp: '/nonexistent/node-gyp.js' },
  })
}

describe('building the compiled lstat', () => {
  it('at install, a failed build says so in one line and lets the install go on', () => {
    const r = buildWithoutNodeGyp('--optional')
    expect(r.status).toBe(0)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/native lstat helper was not built .*Node's lstat/)
  })

  it('in npm run build, a failed build fails', () => {
    const r = buildWithoutNodeGyp()
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/buildNative: node-gyp (build|rebuild) failed/)
  })
})
