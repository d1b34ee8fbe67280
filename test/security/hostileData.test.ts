import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { initWorkspace } from '../../src/index.js'
import { fp } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'

describe('imported runs, model directories and foreign .git are data', () => {
  const quiet = "console.log('agent ran')"
  const plant = "require('node:fs').writeFileSync('pwned', 'x'); console.log('agent ran')"

  /** A run artifact recorded elsewhere whose recorded command writes `pwned` in the directory it runs in. */
  async function hostileArtifact(): Promise<string> {
    const elsewhere = tempDir('hostile-author')
    await initWorkspace({ dir: elsewhere })
    const rec = await fp(elsewhere, 'run', '--record', '-o', 'evil.run.json', '--', process.execPath, '-e', quiet)
    expect(rec.code, rec.stderr).toBe(0)
    const run = JSON.parse(readFileSync(join(elsewhere, 'evil.run.json'), 'utf8')) as { meta: { command: string[] } }
    run.meta.command = [process.execPath, '-e', plant]
    return JSON.stringify(run)
  }

  it('a run imported with snapshot --trace never runs its recorded command on replay, with or without --trust-command; one recorded here does', async () => {
    const home = tempDir('hostile-home')
    await initWorkspace({ dir: home })
    writeFileSync(join(home, 'evil.run.json'), await hostileArtifact())
    expect((await fp(home, 'snapshot', '--trace', 'evil.run.json')).code).toBe(0)
    for (const args of [
      ['replay', 'latest'],
      ['replay', 'latest', '--trust-command'],
      ['replay', 'evil.run.json', '--trust-command'],
    ]) {
      const replay = await fp(home, ...args)
      expect([args, replay.code, replay.stderr]).toEqual([args, 2, expect.stringMatching(/was imported into this store, not recorded by its own run --record/)])
      expect(existsSync(join(home, 'pwned'))).toBe(false)
    }
    const own = await fp(home, 'replay', 'latest', '--', process.execPath, '-e', quiet)
    expect([own.code, own.stderr]).toEqual([0, expect.any(String)])
    expect(existsSync(join(home, 'pwned'))).toBe(false)
    // a run this store's own run --record recorded replays with its own command, as ever
    expect((await fp(home, 'run', '--record', '--', process.execPath, '-e', quiet)).code).toBe(0)
    expect((await fp(home, 'replay', 'latest')).code).toBe(0)
  })

  it('snapshot --model refuses a symlink leading out of the model directory (exit 5), and stores nothing of its target', async () => {
    const home = tempDir('model-home')
    await initWorkspace({ dir: home })
    const secret = join(tempDir('secret'), 'shadow')
    writeFileSync(secret, 'root:$6$secret-hash:19000:0:99999:7:::\n')
    const model = tempDir('model')
    writeFileSync(join(model, 'adapter_config.json'), '{"r": 8}\n')
    symlinkSync(secret, join(model, 'config.json'))
    const refused = await fp(home, 'snapshot', '--model', model, '--allow-empty')
    expect([refused.code, refused.stderr]).toEqual([5, expect.stringMatching(/config\.json is a symlink leading out of the model directory/)])
    expect(spawnSync('grep', ['-r', '-l', 'secret-hash', join(home, '.forkpoint')]).status).toBe(1) // no file of the store holds it
    // a link inside the directory, and a Hugging Face cache snapshot linking to its repository's blobs, are followed
    const repo = tempDir('hf-repo')
    mkdirSync(join(repo, 'blobs'))
    mkdirSync(join(repo, 'snapshots', 'rev1'), { recursive: true })
    writeFileSync(join(repo, 'blobs', 'abc123'), '{"r": 8}\n')
    symlinkSync('../../blobs/abc123', join(repo, 'snapshots', 'rev1', 'config.json'))
    symlinkSync('config.json', join(repo, 'snapshots', 'rev1', 'alias.json'))
    const cached = await fp(home, 'snapshot', '--model', join(repo, 'snapshots', 'rev1'), '--allow-empty')
    expect([cached.code, cached.stderr]).toEqual([0, expect.not.stringMatching(/symlink/)])
  })
})
