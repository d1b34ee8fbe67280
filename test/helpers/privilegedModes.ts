import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { CLI, type CliResult, fpInProcess } from './cli.js'

/**
 * What hostile code in a sandbox leaves to gain privilege on the host: a copy of `id` made
 * setuid (`s`), one given to uid 1000 and made setuid and setgid (`g`), a setgid and
 * sticky directory (`d`), a FIFO (`f`) and a sticky directory (`t`). Each step runs on its
 * own: the sandbox refuses the set-id bits and an unprivileged caller's cannot chown to 1000,
 * the rest must still be there to check (`t`'s bit, which the sandbox allows, is cleared after).
 */
export const PLANT = 'cp /usr/bin/id s; chmod 4755 s; cp /usr/bin/id g; chown 1000:1000 g; chmod 6755 g; mkdir d; chmod 3777 d; mkfifo f; mkdir t; chmod 1777 t; true'

/** The bits and owner that matter of what `PLANT` left under `dir` (null where nothing is). */
export async function planted(dir: string): Promise<Record<'s' | 'g' | 'd' | 'f', { special: number; uid: number; type: string } | null>> {
  const one = async (name: string) => {
    const st = await fs.lstat(join(dir, name)).catch(() => null)
    return st && { special: st.mode & 0o7000, uid: st.uid, type: st.isFIFO() ? 'fifo' : st.isDirectory() ? 'dir' : 'file' }
  }
  const [s, g, d, f] = await Promise.all(['s', 'g', 'd', 'f'].map(one))
  return { s: s!, g: g!, d: d!, f: f! }
}

/** What a caller's sandbox must have left of `PLANT`: plain files owned by the caller, a plain directory, no FIFO. */
export function plainPlanted(uid = process.getuid!()): Record<'s' | 'g' | 'd' | 'f', unknown> {
  return { s: { special: 0, uid, type: 'file' }, g: { special: 0, uid, type: 'file' }, d: { special: 0, uid, type: 'dir' }, f: null }
}

/** The effective uid `nobody` gets running `file` (a copy of `id`): its `id -u`. */
export function euidAsNobody(file: string): string {
  const r = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', file, '-u'], { encoding: 'utf8' })
  return r.stdout.trim() || `failed: ${r.stderr.trim()}`
}

/** Let `nobody` reach files under `dir` (a temporary directory is made 0700). */
export function openToOthers(dir: string): void {
  chmodSync(dir, 0o755)
}

/** Give `dir` to nobody, for the CLI run as nobody there. */
export function giveToNobody(dir: string): void {
  spawnSync('chown', ['-R', 'nobody:nogroup', dir])
  chownSync(dir, 65534, 65534)
}

/** `forkpoint ARGS` as `nobody` in `cwd`. */
export function fpAsNobody(cwd: string, ...args: string[]): Promise<CliResult> {
  const argv = ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'env', 'HOME=/tmp', `PATH=${process.env['PATH']}`, 'NO_COLOR=1', CLI, ...args]
  return new Promise((resolve, reject) => {
    const child = spawn('setpriv', argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let [stdout, stderr] = ['', '']
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()))
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })
}

/** `forkpoint ARGS` in `cwd` as `user`: nobody's through setpriv, root's in this process (a test's own user, root when it runs as root). */
export function fpAs(user: 'root' | 'nobody', cwd: string, ...args: string[]): Promise<CliResult> {
  return user === 'nobody' ? fpAsNobody(cwd, ...args) : fpInProcess(cwd, ...args)
}
