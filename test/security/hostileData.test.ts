import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { initWorkspace } from '../../src/index.js'
import { fp } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

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

  it('an image from another store has its .git/config, hooks and .git files held back at clone and checkout (listed); --trust-git writes them', async () => {
    const marker = join(tempDir('fsmonitor'), 'ran')
    const author = await makeWorkspace({
      'a.txt': 'a\n',
      '.git/config': `[core]\n\tfsmonitor = "touch ${marker}"\n`,
      '.git/HEAD': 'ref: refs/heads/main\n',
      '.git/hooks/post-checkout': { content: `#!/bin/sh\ntouch ${marker}\n`, mode: 0o755 },
      'sub/.git': 'gitdir: /elsewhere\n',
    })
    expect((await fp(author, 'init')).code).toBe(0)
    expect((await fp(author, 'snapshot', '-m', 'with git files')).code).toBe(0)
    const own = join(tempDir('own'), 'out')
    const ownCheckout = await fp(author, 'checkout', 'HEAD', '--into', own)
    expect([ownCheckout.code, ownCheckout.stdout]).toEqual([0, expect.not.stringContaining('held back')]) // this store's own image: as it is
    expect(existsSync(join(own, '.git', 'config'))).toBe(true)
    const layout = `file://${tempDir('layout')}:v1`
    expect((await fp(author, 'push', 'HEAD', layout)).code).toBe(0)

    const into = join(tempDir('clone'), 'agent')
    const clone = await fp(tempDir('cwd'), 'clone', layout, '--into', into)
    expect(clone.code, clone.stderr).toBe(0)
    expect(clone.stdout).toMatch(/held back[^\n]*\n {2}\.git\/config\n {2}\.git\/hooks\/post-checkout\n {2}sub\/\.git\n {2}to write them: /)
    expect(['a.txt', '.git/HEAD'].map((p) => existsSync(join(into, p)))).toEqual([true, true])
    expect(['.git/config', '.git/hooks/post-checkout', 'sub/.git'].map((p) => existsSync(join(into, p)))).toEqual([false, false, false])
    expect(spawnSync('git', ['status'], { cwd: into }).error).toBeUndefined()
    expect(existsSync(marker)).toBe(false)

    const home = tempDir('puller')
    await initWorkspace({ dir: home })
    expect((await fp(home, 'pull', layout, '--tag', 'theirs')).code).toBe(0)
    const held = await fp(home, 'checkout', 'theirs', '--into', join(home, '..', `${home.split('/').pop()}-held`), '--json')
    expect(JSON.parse(held.stdout).heldBack).toEqual(['.git/config', '.git/hooks/post-checkout', 'sub/.git'])
    const trusted = join(tempDir('trusted'), 'out')
    expect((await fp(home, 'checkout', 'theirs', '--into', trusted, '--trust-git')).code).toBe(0)
    expect(readFileSync(join(trusted, '.git', 'config'), 'utf8')).toContain('fsmonitor')
    const restored = await fp(into, 'checkout', 'HEAD', '--trust-git', '--force')
    expect(restored.code, restored.stderr).toBe(0)
    expect(existsSync(join(into, '.git', 'hooks', 'post-checkout'))).toBe(true)
  })
})
