import { spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { initWorkspace } from '../../src/index.js'
import { type Runner, forkpoint, runAs } from '../branch/toolsInBranch.js'
import { fp } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

describe('imported runs, model directories and foreign .git are data', () => {
  const quiet = "console.log('agent ran')"
  const plant = "require('node:fs').writeFileSync('pwned', 'x'); console.log('agent ran')"

  const runners: Runner[] = process.getuid?.() === 0 ? [{ user: 'root' }, { user: 'nobody' }] : []

  /** A fresh directory the runner owns. */
  function ownDir(runner: Runner, label: string): string {
    const dir = tempDir(label)
    if (runner.user === 'nobody') chownSync(dir, 65534, 65534)
    return dir
  }

  /** `forkpoint ARGS` in `cwd` as the runner. */
  function cli(runner: Runner, cwd: string, ...args: string[]): { code: number | null; stdout: string; stderr: string } {
    const ran = forkpoint(runner, cwd, ...args)
    return { code: ran.status, stdout: ran.stdout, stderr: ran.stderr }
  }

  /** A workspace with a store, owned by the runner. */
  function ownWorkspace(runner: Runner, label: string): string {
    const dir = ownDir(runner, label)
    expect(cli(runner, dir, 'init').code).toBe(0)
    return dir
  }

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

  for (const runner of runners) {
    it(`as ${runner.user}: a run imported with snapshot --trace never runs its recorded command on replay, with or without --trust-command; one recorded here does`, async () => {
      const home = ownWorkspace(runner, 'hostile-home')
      writeFileSync(join(home, 'evil.run.json'), await hostileArtifact())
      expect(cli(runner, home, 'snapshot', '--trace', 'evil.run.json').code).toBe(0)
      for (const args of [
        ['replay', 'latest'],
        ['replay', 'latest', '--trust-command'],
        ['replay', 'evil.run.json', '--trust-command'],
      ]) {
        const replay = cli(runner, home, ...args)
        expect([args, replay.code, replay.stderr]).toEqual([args, 2, expect.stringMatching(/was imported into this store, not recorded by its own run --record/)])
        expect(existsSync(join(home, 'pwned'))).toBe(false)
      }
      const own = cli(runner, home, 'replay', 'latest', '--', process.execPath, '-e', quiet)
      expect([own.code, own.stderr]).toEqual([0, expect.any(String)])
      expect(existsSync(join(home, 'pwned'))).toBe(false)
      // a run this store's own run --record recorded replays with its own command, as ever
      expect(cli(runner, home, 'run', '--record', '--', process.execPath, '-e', quiet).code).toBe(0)
      expect(cli(runner, home, 'replay', 'latest').code).toBe(0)
    })

    it(`as ${runner.user}: snapshot --model refuses a symlink leading out of the model directory (exit 5), and stores nothing of its target`, () => {
      const home = ownWorkspace(runner, 'model-home')
      const secret = join(ownDir(runner, 'secret'), 'shadow')
      writeFileSync(secret, 'root:$6$secret-hash:19000:0:99999:7:::\n')
      const model = ownDir(runner, 'model')
      writeFileSync(join(model, 'adapter_config.json'), '{"r": 8}\n')
      symlinkSync(secret, join(model, 'config.json'))
      const refused = cli(runner, home, 'snapshot', '--model', model, '--allow-empty')
      expect([refused.code, refused.stderr]).toEqual([5, expect.stringMatching(/config\.json is a symlink leading out of the model directory/)])
      expect(spawnSync('grep', ['-r', '-l', 'secret-hash', join(home, '.forkpoint')]).status).toBe(1) // no file of the store holds it
      // a link inside the directory, and a Hugging Face cache snapshot linking to its repository's blobs, are followed
      const repo = ownDir(runner, 'hf-repo')
      mkdirSync(join(repo, 'blobs'))
      mkdirSync(join(repo, 'snapshots', 'rev1'), { recursive: true })
      writeFileSync(join(repo, 'blobs', 'abc123'), '{"r": 8}\n')
      symlinkSync('../../blobs/abc123', join(repo, 'snapshots', 'rev1', 'config.json'))
      symlinkSync('config.json', join(repo, 'snapshots', 'rev1', 'alias.json'))
      const cached = cli(runner, home, 'snapshot', '--model', join(repo, 'snapshots', 'rev1'), '--allow-empty')
      expect([cached.code, cached.stderr]).toEqual([0, expect.not.stringMatching(/symlink/)])
    })

    it(`as ${runner.user}: an image from another store has its .git/config, hooks and .git files held back at clone and checkout (listed); --trust-git writes them`, async () => {
      const marker = join(ownDir(runner, 'fsmonitor'), 'ran')
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
      const layoutDir = tempDir('layout')
      expect((await fp(author, 'push', 'HEAD', `file://${layoutDir}:v1`)).code).toBe(0)
      if (runner.user === 'nobody') runAs({ user: 'root' }, layoutDir, ['chown', '-R', 'nobody:nogroup', layoutDir])
      const layout = `file://${layoutDir}:v1`

      const into = join(ownDir(runner, 'clone'), 'agent')
      const clone = cli(runner, ownDir(runner, 'cwd'), 'clone', layout, '--into', into)
      expect(clone.code, clone.stderr).toBe(0)
      expect(clone.stdout).toMatch(/held back[^\n]*\n {2}\.git\/config\n {2}\.git\/hooks\/post-checkout\n {2}sub\/\.git\n {2}to write them: /)
      expect(['a.txt', '.git/HEAD'].map((p) => existsSync(join(into, p)))).toEqual([true, true])
      expect(['.git/config', '.git/hooks/post-checkout', 'sub/.git'].map((p) => existsSync(join(into, p)))).toEqual([false, false, false])
      runAs(runner, into, ['git', 'status'])
      expect(existsSync(marker)).toBe(false)

      const home = ownWorkspace(runner, 'puller')
      expect(cli(runner, home, 'pull', layout, '--tag', 'theirs').code).toBe(0)
      const held = cli(runner, home, 'checkout', 'theirs', '--into', join(ownDir(runner, 'held'), 'out'), '--json')
      expect(JSON.parse(held.stdout).heldBack).toEqual(['.git/config', '.git/hooks/post-checkout', 'sub/.git'])
      const trusted = join(ownDir(runner, 'trusted'), 'out')
      expect(cli(runner, home, 'checkout', 'theirs', '--into', trusted, '--trust-git').code).toBe(0)
      expect(readFileSync(join(trusted, '.git', 'config'), 'utf8')).toContain('fsmonitor')
      const restored = cli(runner, into, 'checkout', 'HEAD', '--trust-git', '--force')
      expect(restored.code, restored.stderr).toBe(0)
      expect(existsSync(join(into, '.git', 'hooks', 'post-checkout'))).toBe(true)
    })
  }
})
