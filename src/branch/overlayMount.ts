import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { readlink } from 'node:fs/promises'
import { promisify } from 'node:util'
import { BackendUnavailableError } from '../errors/index.js'
import { isAlive, processId } from './processId.js'
import type { ProcessId } from './types.js'

const exec = promisify(execFile)

/** One overlay mount: `upper` absent makes a read-only stack of the lower layers. */
export interface OverlaySpec {
  target: string
  lower: string[]
  upper?: { upper: string; work: string }
}

/** Root needs no user namespace to mount (and keeps overlay marks in trusted.* xattrs). */
export const privileged = process.getuid?.() === 0

/** Overlay options take ',' ':' and '\' escaped with a backslash. */
const escape = (path: string): string => path.replace(/[\\,:]/g, (c) => `\\${c}`)

function options(spec: OverlaySpec): string {
  const parts = [`lowerdir=${spec.lower.map(escape).join(':')}`]
  if (spec.upper) parts.push(`upperdir=${escape(spec.upper.upper)}`, `workdir=${escape(spec.upper.work)}`)
  // Unprivileged overlays keep whiteouts' and opaque directories' marks in user.* xattrs.
  if (!privileged) parts.push('userxattr')
  return parts.join(',')
}

/**
 * The namespace holder, in perl (perl-base is on every Debian-like system; Node cannot
 * make mount syscalls) so that one exec does it all: a new mount namespace (and, unless
 * we are root, a user namespace mapping us to its root), `/` made private, the overlays
 * of its arguments mounted, then "ready". A persistent holder then sleeps until killed. A
 * shared one serves requests on stdin, one a line, arguments hex-encoded (any path is
 * safe): `m OPTIONS TARGET` mounts, `u TARGET` unmounts; it answers `ok` or `err WHY`, and
 * exits when stdin closes, i.e. when the process that started it dies. Each overlay is
 * made a shared mount, so a sandbox entering the namespace (as a slave) loses its copy of
 * a sibling's overlay as soon as the sibling is unmounted here.
 */
const HOLDER_SCRIPT = String.raw`
use strict;
use Config;
my ($userns, $uid, $gid, $persist, @specs) = @ARGV;
my %NR = (x86_64 => [165, 166, 272], aarch64 => [40, 39, 97]);
my ($arch) = $Config{archname} =~ /^(x86_64|aarch64)/ or die "unsupported architecture $Config{archname}\n";
my ($SYS_mount, $SYS_umount2, $SYS_unshare) = @{$NR{$arch}};
$| = 1;
sub fail { print STDERR "$_[0]\n"; exit 1 }
sub put { my ($file, $text) = @_; open(my $f, '>', $file) or fail("$file: $!"); print $f $text; close $f or fail("$file: $!") }
syscall($SYS_unshare, $userns ? 0x10000000 | 0x20000 : 0x20000) == 0 or fail("unshare: $!");
if ($userns) { put('/proc/self/setgroups', 'deny'); put('/proc/self/uid_map', "0 $uid 1"); put('/proc/self/gid_map', "0 $gid 1") }
syscall($SYS_mount, my $none = 'none', my $root = '/', 0, 16384 | 262144, 0) == 0 or fail("cannot make / private: $!");
sub overlay {
  my ($opts, $target) = @_;
  syscall($SYS_mount, my $src = 'overlay', $target, my $type = 'overlay', 0, $opts) == 0 or return "cannot mount overlayfs at $target: $!";
  syscall($SYS_mount, my $none = 'none', $target, 0, 1 << 20, 0) == 0 or return "cannot share $target: $!";
  return '';
}
for (my $i = 0; $i < @specs; $i += 2) { my $err = overlay($specs[$i], $specs[$i + 1]); fail($err) if $err ne '' }
print "ready\n";
if ($persist) { close STDIN; sleep 3600 while 1 }
while (my $line = <STDIN>) {
  chomp $line;
  my ($op, @args) = map { pack('H*', $_) } split / /, $line;
  my $err = $op eq 'm' ? overlay(@args) : $op eq 'u' ? (syscall($SYS_umount2, $args[0], 2) == 0 ? '' : "cannot unmount $args[0]: $!") : "unknown request";
  print $err eq '' ? "ok\n" : "err $err\n";
}
`

function holderArgs(specs: OverlaySpec[], persistent: boolean): string[] {
  const ids = [privileged ? '0' : '1', String(process.getuid?.() ?? 0), String(process.getgid?.() ?? 0), persistent ? '1' : '0']
  return ['-e', HOLDER_SCRIPT, '--', ...ids, ...specs.flatMap((s) => [options(s), s.target])]
}

/** Wait for the holder's "ready" (its first line); any other ending is a backend that does not work here. */
function ready(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let out = ''
    let err = ''
    const onData = (c: Buffer) => {
      out += c.toString()
      if (!out.includes('ready\n')) return
      child.stdout!.off('data', onData)
      child.removeAllListeners('exit')
      resolve()
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()))
    child.once('error', reject)
    child.once('exit', (code) => reject(new BackendUnavailableError(`cannot mount overlayfs${privileged ? '' : ' in a user namespace'} (exit ${code}): ${err.trim()}`, { stderr: err })))
  })
}

/**
 * Start a persistent holder (a CLI branch: it must outlive this process) with the
 * overlays mounted in its own namespace, reachable as `/proc/<pid>/root/<target>`. It is
 * detached and lives until stopped; the mounts vanish with it: nothing is ever mounted
 * in the host's namespace.
 */
export async function startHolder(specs: OverlaySpec[]): Promise<ProcessId> {
  const child = spawn('perl', holderArgs(specs, true), { stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  await ready(child)
  child.stdout!.destroy()
  child.stderr!.destroy()
  child.unref()
  return processId(child.pid!)
}

/**
 * This process's shared holder: one namespace holding the overlays of every branch this
 * process makes that does not outlive it. Mounting or unmounting one is a line on a pipe,
 * not a process; the holder exits when this process dies (its stdin closes), and every
 * mount with it.
 */
class SharedHolder {
  readonly id: ProcessId
  readonly #child: ChildProcess
  readonly #waiting: Array<(answer: string) => void> = []
  #buffered = ''

  private constructor(child: ChildProcess) {
    this.#child = child
    this.id = processId(child.pid!)
    child.stdout!.on('data', (c: Buffer) => {
      this.#buffered += c.toString()
      for (let nl = this.#buffered.indexOf('\n'); nl >= 0; nl = this.#buffered.indexOf('\n')) {
        const line = this.#buffered.slice(0, nl)
        this.#buffered = this.#buffered.slice(nl + 1)
        this.#waiting.shift()?.(line)
      }
      if (this.#waiting.length === 0) this.#idle()
    })
    child.once('exit', () => {
      for (const answer of this.#waiting.splice(0)) answer('err the namespace holder exited')
    })
    this.#idle()
  }

  static async start(): Promise<SharedHolder> {
    const child = spawn('perl', holderArgs([], false), { stdio: ['pipe', 'pipe', 'pipe'] })
    await ready(child)
    child.stderr!.destroy()
    child.unref()
    return new SharedHolder(child)
  }

  get alive(): boolean {
    return isAlive(this.id)
  }

  /** Send one request; the pipes keep this process alive only while an answer is awaited. */
  async request(op: 'm' | 'u', ...args: string[]): Promise<void> {
    const answer = new Promise<string>((resolve) => this.#waiting.push(resolve))
    this.#busy()
    this.#child.stdin!.write(`${[op, ...args].map((a) => Buffer.from(a).toString('hex')).join(' ')}\n`)
    const line = await answer
    if (line !== 'ok') throw new BackendUnavailableError(`overlay ${op === 'm' ? 'mount' : 'unmount'} failed: ${line.replace(/^err /, '')}`, { args })
  }

  #busy(): void {
    ;(this.#child.stdout as unknown as { ref(): void }).ref()
    ;(this.#child.stdin as unknown as { ref(): void }).ref()
  }

  #idle(): void {
    ;(this.#child.stdout as unknown as { unref(): void }).unref()
    ;(this.#child.stdin as unknown as { unref(): void }).unref()
  }
}

let shared: Promise<SharedHolder> | null = null

/** This process's shared holder, started on first use and again if it died. */
async function sharedHolder(): Promise<SharedHolder> {
  for (let attempt = 0; ; attempt++) {
    const pending = shared ?? (shared = SharedHolder.start())
    const holder = await pending.catch((err: unknown) => {
      if (shared === pending) shared = null
      throw err
    })
    if (holder.alive || attempt === 2) return holder
    if (shared === pending) shared = null
  }
}

/** Mount overlays in this process's shared holder; returns the holder. */
export async function mountShared(specs: OverlaySpec[]): Promise<ProcessId> {
  const holder = await sharedHolder()
  for (const spec of specs) await holder.request('m', options(spec), spec.target)
  return holder.id
}

/**
 * Take overlays down. In this process's shared holder: a request on its pipe (a lazy
 * unmount: nothing stays visible). A holder that serves nothing else (`exclusive`: a
 * persistent branch's own, or the shared holder of a process that is gone): killed, its
 * mounts go with it. Another live process's shared holder: unmounted from inside its
 * namespaces, as it keeps that process's other branches.
 */
export async function unmount(holder: ProcessId, targets: string[], { exclusive }: { exclusive: boolean }): Promise<void> {
  const ours = shared && (await shared.catch(() => null))
  if (ours && ours.id.pid === holder.pid && ours.id.start === holder.start && ours.alive) {
    for (const target of targets) await ours.request('u', target)
    return
  }
  if (exclusive) return stopHolder(holder)
  if (!isAlive(holder)) return
  const user = (await readlink(`/proc/${holder.pid}/ns/user`)) !== (await readlink('/proc/self/ns/user'))
  for (const target of targets) {
    await exec('nsenter', [`--target=${holder.pid}`, ...(user ? ['--user', '--preserve-credentials'] : []), '--mount', 'umount', '-l', target]).catch((err: { stderr?: string }) => {
      if (isAlive(holder) && !/not mounted/.test(err.stderr ?? '')) throw err
    })
  }
}

/** Kill a namespace holder and wait until it is gone, so its mounts are gone too. */
export async function stopHolder(holder: ProcessId): Promise<void> {
  if (!isAlive(holder)) return
  try {
    process.kill(holder.pid, 'SIGKILL')
  } catch {
    return
  }
  for (let i = 0; i < 2000 && isAlive(holder); i++) await new Promise((r) => setTimeout(r, 1))
}

/** The path under which this process sees `path` of a holder's mount namespace. */
export function throughHolder(holder: ProcessId | null, path: string): string {
  return holder ? `/proc/${holder.pid}/root${path}` : path
}
