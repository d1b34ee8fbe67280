import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { readlink } from 'node:fs/promises'
import { SandboxError } from '../errors/index.js'
import { type ProcessId, isAlive, processId } from './processId.js'
import { type Syscalls, syscalls } from './syscalls.js'

/** Root needs no user namespace to mount. */
export const privileged = process.getuid?.() === 0

/**
 * A namespace holder, in perl (perl-base is on every Debian-like system; Node cannot make
 * these syscalls) so that one exec does it all: a new mount namespace (and, unless we are
 * root, a user namespace mapping us to its root), `/` made private, the overlays of its
 * arguments mounted (each a shared mount, so a sandbox entering the namespace as a slave
 * loses its copy of one as soon as it is unmounted here), then "ready". A persistent holder
 * then sleeps until killed. A shared one serves requests on stdin, one a line: an id, an
 * operation and hex-encoded arguments (any path is safe):
 *   ID m OPTIONS TARGET        mount an overlay             -> ID ok | ID err WHY
 *   ID u TARGET                unmount it (lazily)          -> ID ok | ID err WHY
 *   ID r OUT ERR IN READY ENV ARGV  start a sandbox: a fork with stdin, stdout, stderr and
 *                              fd 3 on those files, in its own process group, exec'ing
 *                              ARGV with ENV (NUL-separated NAME=VALUE)
 *                              -> ID pid PID, then ID exit CODE SIGNAL when it ends
 * Forking here instead of in Node costs a fraction of a millisecond (Node's spawn forks a
 * process of a hundred megabytes and waits for its exec). It exits when stdin closes, i.e.
 * when the process that started it dies, and every mount with it.
 */
const holderScript = (nr: Syscalls): string => String.raw`
use strict;
use POSIX ();
my ($userns, $uid, $gid, $persist, @specs) = @ARGV;
my ($SYS_mount, $SYS_umount2, $SYS_unshare, $SYS_prctl) = (${nr.mount}, ${nr.umount2}, ${nr.unshare}, ${nr.prctl});
sub fail { print STDERR "$_[0]\n"; exit 1 }
sub put { my ($file, $text) = @_; open(my $f, '>', $file) or fail("$file: $!"); print $f $text; close $f or fail("$file: $!") }
sub say { syswrite(STDOUT, "$_[0]\n") }
syscall($SYS_unshare, $userns ? 0x10000000 | 0x20000 : 0x20000) == 0 or fail("unshare: $!");
if ($userns) { put('/proc/self/setgroups', 'deny'); put('/proc/self/uid_map', "0 $uid 1"); put('/proc/self/gid_map', "0 $gid 1") }
syscall($SYS_mount, my $none = 'none', my $root = '/', 0, 16384 | 262144, 0) == 0 or fail("cannot make / private: $!");
sub overlay {
  my ($opts, $target) = @_;
  syscall($SYS_mount, my $src = 'overlay', $target, my $type = 'overlay', 0, $opts) == 0 or return "cannot mount overlayfs at $target: $!";
  if (syscall($SYS_mount, my $none = 'none', $target, 0, 1 << 20, 0) != 0) { my $why = "cannot share $target: $!"; syscall($SYS_umount2, $target, 2); return $why }
  return '';
}
sub start {
  my ($id, $out, $err, $in, $ready, $env, @argv) = @_;
  my $holder = $$;
  my $waiter = fork() // return say("$id err fork: $!");
  return if $waiter;
  syscall($SYS_prctl, 1, 9); # the waiter dies with the holder, and the sandbox with the waiter
  POSIX::_exit(0) if getppid() != $holder;
  $SIG{CHLD} = 'DEFAULT';
  my $run = fork() // do { say("$id err fork: $!"); POSIX::_exit(0) };
  if ($run == 0) {
    setpgrp(0, 0);
    open(STDIN, '<', $in eq '' ? '/dev/null' : $in) or POSIX::_exit(125);
    open(STDOUT, '>', $out) or POSIX::_exit(125);
    open(STDERR, '>', $err) or POSIX::_exit(125);
    $^F = 3; # fd 3 (if open lands there) is not closed on exec
    open(my $r, '>', $ready) or POSIX::_exit(125);
    POSIX::dup2(fileno($r), 3) // POSIX::_exit(125);
    %ENV = map { split /=/, $_, 2 } grep { /=/ } split /\0/, $env;
    exec { $argv[0] } @argv;
    POSIX::_exit(127);
  }
  say("$id pid $run");
  waitpid($run, 0);
  say("$id exit " . ($? >> 8) . ' ' . ($? & 127));
  POSIX::_exit(0);
}
for (my $i = 0; $i < @specs; $i += 2) { my $err = overlay($specs[$i], $specs[$i + 1]); fail($err) if $err ne '' }
say('ready');
if ($persist) { close STDIN; sleep 3600 while 1 }
$SIG{CHLD} = 'IGNORE';
while (my $line = <STDIN>) {
  chomp $line;
  my ($id, $op, @args) = split / /, $line, -1; # -1: empty arguments at the end are arguments too
  @args = map { pack('H*', $_) } @args;
  if ($op eq 'r') { start($id, @args); next }
  my $err = $op eq 'm' ? overlay(@args) : $op eq 'u' ? (syscall($SYS_umount2, $args[0], 2) == 0 ? '' : "cannot unmount $args[0]: $!") : 'unknown request';
  $err =~ tr/\n/ /; # a path with a newline must not break the answer into lines
  say($err eq '' ? "$id ok" : "$id err $err");
}
`

/** What a shared holder reports about a sandbox it started. */
export interface HolderRun {
  /** Its process (group leader): kill `-pid` to kill it all. */
  pid: Promise<number>
  /** Its exit code, or the signal that killed it. */
  exit: Promise<{ code: number | null; signal: number }>
}

/** The holder's perl source, built at its first start. */
let holderSource: string | undefined

function holderArgs(specs: Array<[string, string]>, persistent: boolean): string[] {
  const ids = [privileged ? '0' : '1', String(process.getuid?.() ?? 0), String(process.getgid?.() ?? 0), persistent ? '1' : '0']
  holderSource ??= holderScript(syscalls())
  return ['-e', holderSource, '--', ...ids, ...specs.flat()]
}

/** Wait for the holder's "ready" (its first line); any other ending means namespaces or mounts do not work here. */
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
    child.once('exit', (code) => reject(new SandboxError(`cannot hold a mount namespace${privileged ? '' : ' in a user namespace'} (exit ${code}): ${err.trim()}`, { stderr: err })))
  })
}

/**
 * Start a persistent holder with overlays (`[options, target]` pairs) mounted in its own
 * namespace, reachable as `/proc/<pid>/root/<target>`. It is detached and lives until
 * killed; the mounts vanish with it.
 */
export async function startHolder(mounts: Array<[string, string]>): Promise<ProcessId> {
  const child = await spawnHolder(mounts, true)
  child.stdout!.destroy()
  return processId(child.pid!)
}

/** A holder, once it says it is ready: persistent (detached, no stdin) or this process's (it reads requests on stdin). */
async function spawnHolder(mounts: Array<[string, string]>, persistent: boolean): Promise<ChildProcess> {
  const child = spawn('perl', holderArgs(mounts, persistent), { stdio: [persistent ? 'ignore' : 'pipe', 'pipe', 'pipe'], detached: persistent })
  await ready(child)
  child.stderr!.destroy()
  child.unref()
  return child
}

type Listener = (kind: string, rest: string) => void

const HOLDER_EXITED = 'the namespace holder exited'

/**
 * This process's shared holder: one namespace holding the overlays of every branch this
 * process makes that does not outlive it, and the fork server of their sandboxes. A mount,
 * an unmount or a sandbox is a line on a pipe, not a process spawned by Node; the holder
 * exits when this process dies (its stdin closes), and every mount with it.
 */
export class SharedHolder {
  readonly id: ProcessId
  readonly #child: ChildProcess
  readonly #listeners = new Map<number, Listener>()
  #nextId = 0
  #buffered = ''
  #exited = false

  private constructor(child: ChildProcess) {
    this.#child = child
    this.id = processId(child.pid!)
    child.stdout!.setEncoding('utf8') // a character of a path in an error may span two chunks
    child.stdout!.on('data', (c: string) => this.#read(c))
    // A request written as it dies fails with EPIPE here; its answer is the 'close' below.
    child.stdin!.on('error', () => undefined)
    child.once('exit', () => (this.#exited = true))
    // After 'close', not 'exit': the answers it wrote before dying are read by then.
    child.once('close', () => {
      for (const listener of this.#listeners.values()) listener('err', HOLDER_EXITED)
      this.#listeners.clear()
    })
    this.#ref(false)
  }

  static async start(): Promise<SharedHolder> {
    return new SharedHolder(await spawnHolder([], false))
  }

  /** Mount (`m`) or unmount (`u`); throws SandboxError with the holder's reason. */
  async request(op: 'm' | 'u', ...args: string[]): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#send(op, args, (kind, rest) => (kind === 'ok' ? resolve() : reject(new SandboxError(`${op === 'm' ? 'mount' : 'unmount'} failed: ${rest}`, { args }))))
    })
  }

  /** Start argv with stdin/stdout/stderr/fd 3 on those files, in its own process group. */
  run(files: { stdin: string; stdout: string; stderr: string; ready: string }, argv: string[], env: NodeJS.ProcessEnv): HolderRun {
    let pid!: (p: number) => void
    let exit!: (e: { code: number | null; signal: number }) => void
    let fail!: (err: Error) => void
    let failStarted!: (err: Error) => void
    const started = new Promise<number>((resolve, reject) => ((pid = resolve), (failStarted = reject)))
    const ended = new Promise<{ code: number | null; signal: number }>((resolve, reject) => {
      exit = resolve
      // Also after its pid came: the holder may die while the sandbox runs.
      fail = (err) => (failStarted(err), reject(err))
    })
    // Observed whenever the caller gets to them (e.g. `exit` after `pid`), not reported unhandled meanwhile.
    for (const p of [started, ended]) p.catch(() => undefined)
    const environment = Object.entries(env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`])).join('\0')
    this.#send('r', [files.stdout, files.stderr, files.stdin, files.ready, environment, ...argv], (kind, rest) => {
      if (kind === 'pid') return pid(Number(rest))
      if (kind === 'exit') {
        const [code, signal] = rest.split(' ').map(Number) as [number, number]
        return exit(signal === 0 ? { code, signal } : { code: null, signal })
      }
      fail(new SandboxError(`the sandbox did not run to its end: ${rest}`, { argv }))
    })
    return { pid: started, exit: ended }
  }

  /** One request; `listener` gets every answer to it until a final one (ok, err, exit). */
  #send(op: string, args: string[], listener: Listener): void {
    if (this.#exited) return queueMicrotask(() => listener('err', HOLDER_EXITED))
    const id = this.#nextId++
    this.#listeners.set(id, listener)
    this.#ref(true)
    this.#child.stdin!.write(`${id} ${op} ${args.map((a) => Buffer.from(a).toString('hex')).join(' ')}\n`)
  }

  #read(chunk: string): void {
    this.#buffered += chunk
    for (let nl = this.#buffered.indexOf('\n'); nl >= 0; nl = this.#buffered.indexOf('\n')) {
      const line = this.#buffered.slice(0, nl)
      this.#buffered = this.#buffered.slice(nl + 1)
      const [id, kind = '', ...rest] = line.split(' ')
      const listener = this.#listeners.get(Number(id))
      if (kind !== 'pid') this.#listeners.delete(Number(id))
      listener?.(kind, rest.join(' '))
    }
    if (this.#listeners.size === 0) this.#ref(false)
  }

  /** The pipes keep this process alive only while an answer is awaited. */
  #ref(busy: boolean): void {
    for (const stream of [this.#child.stdout, this.#child.stdin] as unknown as Array<{ ref(): void; unref(): void }>) {
      if (busy) stream.ref()
      else stream.unref()
    }
  }
}

let shared: Promise<SharedHolder> | null = null

/** This process's shared holder, started on first use and again if it died. */
export async function sharedHolder(): Promise<SharedHolder> {
  for (let attempt = 0; ; attempt++) {
    const pending = shared ?? (shared = SharedHolder.start())
    const holder = await pending.catch((err: unknown) => {
      if (shared === pending) shared = null
      throw err
    })
    if (isAlive(holder.id) || attempt === 2) return holder
    if (shared === pending) shared = null
  }
}

/** Does process `pid` have a user namespace other than ours (an unprivileged holder), which must be entered too? */
export async function ownUserNamespace(pid: number): Promise<boolean> {
  const [theirs, ours] = await Promise.all([readlink(`/proc/${pid}/ns/user`), readlink('/proc/self/ns/user')])
  return theirs !== ours
}

/** This process's shared holder if it is the process `pid` (and runs), else null. */
export async function ownSharedHolder(pid: number): Promise<SharedHolder | null> {
  const ours = shared && (await shared.catch(() => null))
  return ours && ours.id.pid === pid && isAlive(ours.id) ? ours : null
}

/** Kill a holder and wait until it is gone, so its mounts are gone too. */
export async function stopHolder(holder: ProcessId): Promise<void> {
  if (!isAlive(holder)) return
  try {
    process.kill(holder.pid, 'SIGKILL')
  } catch {
    return
  }
  for (let i = 0; i < 2000 && isAlive(holder); i++) await new Promise((r) => setTimeout(r, 1))
}

/**
 * Stop the persistent holders mounting at `target` that no branch records: one started
 * by a process that died before it could write the holder into the branch's state would
 * otherwise hold its mounts (and run) forever. Found by their arguments, which name their targets.
 */
export async function stopStrayHolders(target: string): Promise<void> {
  const strays = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
        return argv[0] === 'perl' && argv.includes(target)
      } catch {
        return false // gone meanwhile
      }
    })
  await Promise.all(strays.map((pid) => stopHolder(processId(Number(pid)))))
}

