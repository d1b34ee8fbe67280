import { type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process'
import { chownSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { CLI } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

/**
 * How a test runs a command: as this process's user (root here), or as `nobody` through
 * setpriv; optionally inside the mount namespace of a process (`nsenter`), where a test
 * gave /dev/fuse the permissions it wants without touching the host's.
 */
export interface Runner {
  user: 'root' | 'nobody'
  namespaceOf?: number
}

export type Ran = SpawnSyncReturns<string>

export function runAs(runner: Runner, cwd: string, argv: string[], env: Record<string, string> = {}): Ran {
  const asUser = runner.user === 'nobody' ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'] : []
  const inNamespace = runner.namespaceOf === undefined ? [] : ['nsenter', `--target=${runner.namespaceOf}`, '--mount', `--wd=${cwd}`]
  const home = runner.user === 'nobody' ? nobodyHome() : (process.env['HOME'] ?? '/root')
  const full = [...inNamespace, ...asUser, 'env', `HOME=${home}`, `PATH=${process.env['PATH']}`, 'NO_COLOR=1', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv]
  return spawnSync(full[0]!, full.slice(1), { cwd, encoding: 'utf8', timeout: 120_000 })
}

export const forkpoint = (runner: Runner, cwd: string, ...args: string[]): Ran => runAs(runner, cwd, [CLI, ...args])

let home: string | undefined
function nobodyHome(): string {
  if (!home) {
    home = tempDir('nobody-home')
    chownSync(home, 65534, 65534)
  }
  return home
}

/** A git repository with one commit, a script and a package whose test runs it, owned by the runner's user; its store initialised. */
export async function toolWorkspace(runner: Runner): Promise<string> {
  const dir = await makeWorkspace({
    'script.js': "require('fs').writeFileSync('out.txt', 'ran\\n'); console.log('script ran in ' + process.cwd())\n",
    'package.json': JSON.stringify({ name: 'tools', version: '1.0.0', scripts: { test: 'node script.js' } }),
  })
  if (runner.user === 'nobody') chownTree(dir)
  for (const argv of [
    ['git', 'init', '-q', '.'],
    ['git', 'add', '.'],
    ['git', '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init'],
    [CLI, 'init'],
  ]) {
    const ran = runAs(runner, dir, argv)
    if (ran.status !== 0) throw new Error(`${argv.join(' ')}: ${ran.stderr}`)
  }
  return dir
}

function chownTree(path: string): void {
  chownSync(path, 65534, 65534)
  if (statSync(path).isDirectory()) for (const name of readdirSync(path)) chownTree(join(path, name))
}

/** The three tools a coding agent needs most, in `path`: each one's result. */
export function toolsIn(runner: Runner, path: string): { git: Ran; node: Ran; npm: Ran; changed: Ran } {
  const git = runAs(runner, path, ['git', 'status', '--porcelain'])
  const node = runAs(runner, path, ['node', 'script.js'])
  const npm = runAs(runner, path, ['npm', 'test', '--silent'])
  const changed = runAs(runner, path, ['git', 'status', '--porcelain', '--untracked-files=all'])
  return { git, node, npm, changed }
}

/**
 * A process holding a private mount namespace in which /dev/fuse is a node with `mode`
 * (0666 as Debian's udev makes it, or 0600 as here), so a test sets FUSE's availability
 * without changing the host. Stop it with `kill`.
 */
export async function fuseNamespace(mode: '666' | '600'): Promise<{ pid: number; kill(): void }> {
  const devDir = tempDir('fuse-dev')
  const script = `set -e; mount -t tmpfs -o mode=755 tmpfs ${devDir}; mknod -m ${mode} ${devDir}/fuse c 10 229; mount --bind ${devDir}/fuse /dev/fuse; echo ready; exec sleep 100000`
  const child = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve())
    child.once('exit', (code) => reject(new Error(`the FUSE test namespace exited ${code}`)))
  })
  return { pid: child.pid!, kill: () => child.kill('SIGKILL') }
}
