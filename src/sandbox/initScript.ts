import { type Syscalls, syscalls } from './syscalls.js'

let script: string | undefined

/**
 * The sandbox, run by perl (perl-base is on every Debian-like system) so that one exec
 * does what would otherwise take nsenter, unshare and a dozen `mount` calls: Node cannot
 * make these syscalls, and the sandbox must start in a few milliseconds.
 *
 * The first process enters the namespaces of a branch's holder when there is one (its
 * user namespace too when it has its own: an unprivileged holder), then unshares fresh
 * mount, PID (and network) namespaces, and a user namespace mapping the caller to root
 * unless it entered the holder's; inside a holder its shared overlays become slaves (a
 * sibling unmounted there vanishes here too), elsewhere every mount is private. It forks
 * the new PID namespace's init, which dies with it (PDEATHSIG), and exits with its status;
 * it dies with its own launcher too, so a caller killed mid-run takes its sandbox along.
 * The init runs as root of that user namespace and:
 * 1. makes every mount read-only (one recursive mount_setattr), then puts fresh tmpfs on
 *    /tmp, /var/tmp and /dev/shm, so writes outside the branch fail or vanish;
 * 2. bind-mounts the branch view at the workspace's own path (through an O_PATH fd, so
 *    a tmpfs over /tmp cannot hide the view first) and makes that one mount writable
 *    (except `protect`, the store, when the workspace itself is the view);
 * 3. mounts a /proc of the new PID namespace, brings `lo` up in a new network namespace;
 * 4. stays as PID 1 reaping orphans; the command runs in a nested user + mount namespace
 *    as the caller's own uid, so every mount above is locked and cannot be undone, with
 *    rlimits applied. When the command exits, PID 1 exits and the kernel kills whatever
 *    the command left running.
 * It writes "ready" on fd 3 right before exec, so the caller can tell a setup failure
 * (exit 125 and one `forkpoint-sandbox:` line) from the command's own exit status.
 *
 * Arguments: holder enter-user view workspace cwd no-net uid gid as-bytes nproc cpu-seconds protect cgroups argv...
 * (`holder`: the pid whose namespaces to enter, 'self' when started by the holder itself
 * (already inside them), or ''; 0 = no limit; `protect`, when not
 * empty, is a directory under the workspace kept read-only; `cgroups`, ':'-separated
 * cgroup.procs files to join first, where limits are cgroups).
 */
export function sandboxInit(): string {
  // built once (at first use, so an unsupported architecture fails there, not at import)
  script ??= initScript(syscalls())
  return script
}

const initScript = (nr: Syscalls): string => String.raw`
use strict;
my ($holder, $enterUser, $view, $ws, $cwd, $loUp, $uid, $gid, $as, $nproc, $cpu, $protect, $cgroups, @cmd) = @ARGV;
sub fail { print STDERR "forkpoint-sandbox: $_[0]\n"; exit 125 }
my ($SYS_mount, $SYS_unshare, $SYS_prlimit, $SYS_setns, $SYS_prctl) = (${nr.mount}, ${nr.unshare}, ${nr.prlimit64}, ${nr.setns}, ${nr.prctl});
sub put { my ($file, $text) = @_; open(my $f, '>', $file) or fail("$file: $!"); print $f $text; close $f or fail("$file: $!") }
my $launcher = getppid();
syscall($SYS_prctl, 1, 9) == 0 or fail("prctl: $!"); # killed with whoever launched us (the caller, or its holder's waiter)
exit 125 if getppid() != $launcher;
if ($holder ne '' && $holder ne 'self') {
  for my $ns ($enterUser ? (['user', 0x10000000]) : (), ['mnt', 0x20000]) {
    open(my $f, '<', "/proc/$holder/ns/$ns->[0]") or fail("cannot enter the branch's namespace: $!");
    syscall($SYS_setns, fileno($f), $ns->[1]) == 0 or fail("setns $ns->[0]: $!");
  }
}
syscall($SYS_unshare, ($enterUser ? 0 : 0x10000000) | 0x20000 | 0x20000000 | ($loUp ? 0x40000000 : 0)) == 0 or fail("unshare: $!");
if (!$enterUser) { put('/proc/self/setgroups', 'deny'); put('/proc/self/uid_map', "0 $uid 1"); put('/proc/self/gid_map', "0 $gid 1") }
syscall($SYS_mount, my $none = 'none', my $root = '/', 0, 16384 | ($holder ne '' ? 524288 : 262144), 0) == 0 or fail("mount propagation: $!");
pipe(my $parentGone, my $parentHere) or fail("pipe: $!");
my $init = fork() // fail("fork: $!");
if ($init) {
  waitpid($init, 0);
  kill($? & 127, $$) if $? & 127;
  exit($? >> 8);
}
close $parentHere;
syscall($SYS_prctl, 1, 9) == 0 or fail("prctl: $!");
vec(my $gone = '', fileno($parentGone), 1) = 1;
exit 125 if select($gone, undef, undef, 0) > 0;
sub mnt { my ($src, $tgt, $type, $flags) = @_; syscall($SYS_mount, $src, $tgt, $type, $flags, 0) == 0 or fail("mount $tgt: $!") }
sub setattr { my ($path, $set, $clr) = @_; my $attr = pack('Q4', $set, $clr, 0, 0); syscall(442, -100, $path, 0x8000, $attr, 32) == 0 or fail("mount_setattr $path: $!") }
sub mkdirp { my $p = ''; for (grep { length } split m{/}, $_[0]) { $p .= "/$_"; mkdir $p } }
open(my $ready, '>&=', 3) or fail("no readiness pipe: $!");
for my $procs (grep { length } split /:/, $cgroups) { open(my $f, '>', $procs) or fail("cannot join $procs: $!"); print $f '0'; close $f or fail("cannot join $procs: $!") }
sysopen(my $viewfh, $view, 010000000) or fail("cannot open the branch view $view: $!");
setattr('/', 1, 0);
for my $t ('/tmp', '/var/tmp', '/dev/shm') { mnt('tmpfs', $t, 'tmpfs', 2 | 4) if -d $t && !-l $t }
mkdirp($ws);
mnt('/proc/self/fd/' . fileno($viewfh), $ws, 0, 4096 | 16384);
setattr($ws, 0, 1);
if ($protect ne '' && -d $protect) { mnt($protect, $protect, 0, 4096 | 16384); setattr($protect, 1, 0) }
close $viewfh;
{ my ($s, $t, $f) = ('proc', '/proc', 'proc'); syscall($SYS_mount, $s, $t, $f, 2 | 4 | 8, 0) }
if ($loUp) { my ($sock, $req) = (undef, pack('a16 s x22', 'lo', 1 | 8 | 64)); socket($sock, 2, 2, 0) and ioctl($sock, 0x8914, $req) }
my $child = fork() // fail("fork: $!");
if ($child == 0) {
  syscall($SYS_unshare, 0x10000000 | 0x20000) == 0 or fail("unshare: $!");
  for (['setgroups', 'deny'], ['uid_map', "$uid 0 1"], ['gid_map', "$gid 0 1"]) {
    open(my $f, '>', "/proc/self/$_->[0]") or fail("$_->[0]: $!");
    print $f $_->[1];
    close $f or fail("$_->[0]: $!");
  }
  for ([9, $as], [6, $nproc], [0, $cpu]) {
    my ($res, $v) = @$_;
    next unless $v;
    my $lim = pack('Q2', $v, $v);
    syscall($SYS_prlimit, 0, $res, $lim, 0) == 0 or fail("prlimit: $!");
  }
  chdir $cwd or fail("cannot enter $cwd: $!");
  syswrite($ready, "ready\n");
  close $ready;
  exec { $cmd[0] } @cmd or do { print STDERR "forkpoint-sandbox: cannot run $cmd[0]: $!\n"; exit 127 };
}
close $ready;
while ((my $w = waitpid(-1, 0)) > 0) {
  next unless $w == $child;
  exit($? & 127 ? 128 + ($? & 127) : $? >> 8);
}
fail("lost the command process");
`
