/*
 * seccomp-filter: writes the sandbox's seccomp filter (docs/sandbox.md), compiled with
 * libseccomp, as a C header on stdout: `static const struct sock_filter SECCOMP_FILTER[]`.
 * scripts/buildNative.mjs runs it at build time and native/sandbox.c includes the header,
 * so each sandbox loads a ready BPF program instead of compiling one (about 1.5 ms) and the
 * runtime does not need libseccomp. An argument names the architecture to write it for
 * (libseccomp's names: x86_64, aarch64), so one build machine writes the filters of every
 * prebuilt runtime; without one it is the machine's own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

static void fail(const char *what) {
  fprintf(stderr, "seccomp-filter: %s\n", what);
  exit(1);
}

/*
 * Calls the sandbox does not need, modelled on Docker's default profile, each refused with
 * EPERM: the kernel keyring, modules, kexec, BPF, perf, userfaultfd, io_uring, file handles,
 * every mount call, new namespaces, and host-wide knobs (clock, swap, reboot, accounting).
 */
static const char *const denied_calls[] = {
    "add_key", "request_key", "keyctl",
    "init_module", "finit_module", "delete_module", "create_module", "query_module", "get_kernel_syms",
    "kexec_load", "kexec_file_load", "reboot",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "open_by_handle_at", "lookup_dcookie", "nfsservctl", "uselib", "ustat", "sysfs", "_sysctl", "syslog",
    "mount", "umount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick", "open_tree", "move_mount", "mount_setattr",
    "unshare", "setns",
    "swapon", "swapoff", "acct", "settimeofday", "stime", "clock_settime", "clock_adjtime",
    "iopl", "ioperm", "vm86", "vm86old", "quotactl", "quotactl_fd", "vhangup",
    NULL,
};

static void deny(scmp_filter_ctx ctx, int nr, unsigned count, const struct scmp_arg_cmp *args) {
  if (seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, count, args) != 0) fail("cannot add a rule");
}

/* `name` refused when its argument `arg` holds `bit`, and (with `flag`) its argument `flags_arg` holds `flag`. */
static void deny_bit(scmp_filter_ctx ctx, const char *name, unsigned arg, scmp_datum_t bit, int flags_arg, scmp_datum_t flag) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return;
  struct scmp_arg_cmp cmp[2] = {SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, bit, bit), SCMP_CMP(flags_arg < 0 ? 0 : (unsigned)flags_arg, SCMP_CMP_MASKED_EQ, flag, flag)};
  deny(ctx, nr, flags_arg < 0 ? 1 : 2, cmp);
}

/*
 * No setuid or setgid file comes into being, even for the run's length: what a sandbox
 * writes is on the host as it writes it, and a root caller's setuid file is every local
 * user's root until the run ends and normalisation clears it. Refused with EPERM wherever a
 * mode is given: chmod, fchmod, fchmodat, fchmodat2, mknod, mknodat, creat, and open and
 * openat that create (O_CREAT, O_TMPFILE). openat2's mode is behind a pointer: ENOSYS, so
 * libc falls back to openat. The sticky bit stays (normalisation clears it).
 */
static void deny_set_id_modes(scmp_filter_ctx ctx) {
  static const scmp_datum_t bits[] = {S_ISUID, S_ISGID};
  static const scmp_datum_t creating[] = {O_CREAT, __O_TMPFILE};
  for (size_t i = 0; i < sizeof bits / sizeof *bits; i++) {
    deny_bit(ctx, "chmod", 1, bits[i], -1, 0);
    deny_bit(ctx, "fchmod", 1, bits[i], -1, 0);
    deny_bit(ctx, "fchmodat", 2, bits[i], -1, 0);
    deny_bit(ctx, "fchmodat2", 2, bits[i], -1, 0);
    deny_bit(ctx, "mknod", 1, bits[i], -1, 0);
    deny_bit(ctx, "mknodat", 2, bits[i], -1, 0);
    deny_bit(ctx, "creat", 1, bits[i], -1, 0);
    for (size_t j = 0; j < sizeof creating / sizeof *creating; j++) {
      deny_bit(ctx, "open", 2, bits[i], 1, creating[j]);
      deny_bit(ctx, "openat", 3, bits[i], 2, creating[j]);
    }
  }
  int openat2 = seccomp_syscall_resolve_name("openat2");
  if (openat2 != __NR_SCMP_ERROR && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), openat2, 0) != 0) fail("cannot add a rule for openat2");
}

/* A filter for `arch` alone; rules then take the build machine's numbers and libseccomp translates them by name. */
static scmp_filter_ctx build_filter(uint32_t arch) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) fail("cannot make a filter");
  if (arch != seccomp_arch_native() && (seccomp_arch_add(ctx, arch) != 0 || seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE) != 0)) fail("cannot target the architecture");
  /* the 32-bit ABIs too, or a program would go around the filter through them */
  if (arch == SCMP_ARCH_X86_64 && (seccomp_arch_add(ctx, SCMP_ARCH_X86) != 0 || seccomp_arch_add(ctx, SCMP_ARCH_X32) != 0)) fail("cannot add the 32-bit ABIs");
  for (const char *const *name = denied_calls; *name; name++) {
    int nr = seccomp_syscall_resolve_name(*name);
    if (nr != __NR_SCMP_ERROR) deny(ctx, nr, 0, NULL);
  }
  static const unsigned long ioctls[] = {TIOCSTI, TIOCLINUX};
  for (size_t i = 0; i < sizeof ioctls / sizeof *ioctls; i++) deny(ctx, SCMP_SYS(ioctl), 1, &SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, ioctls[i]));
  static const unsigned long namespaces[] = {CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWCGROUP};
  for (size_t i = 0; i < sizeof namespaces / sizeof *namespaces; i++) deny(ctx, SCMP_SYS(clone), 1, &SCMP_A0(SCMP_CMP_MASKED_EQ, namespaces[i], namespaces[i]));
  deny_set_id_modes(ctx);
  /* clone3's flags are behind a pointer, out of a filter's reach: ENOSYS makes libc fall back to clone */
  if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) != 0) fail("cannot add a rule for clone3");
  return ctx;
}

/* The filter as libseccomp exports it (raw BPF, through a temporary file), printed as a C array. */
int main(int argc, char **argv) {
  uint32_t arch = argc > 1 ? seccomp_arch_resolve_name(argv[1]) : seccomp_arch_native();
  if (arch == 0) fail("unknown architecture");
  scmp_filter_ctx ctx = build_filter(arch);
  FILE *raw = tmpfile();
  if (!raw || seccomp_export_bpf(ctx, fileno(raw)) != 0) fail("cannot export the filter");
  rewind(raw);
  printf("/* made by native/seccompFilter.c at build time */\nstatic const struct sock_filter SECCOMP_FILTER[] = {\n");
  for (struct sock_filter f; fread(&f, sizeof f, 1, raw) == 1;) printf("  {0x%04x, %u, %u, 0x%08x},\n", f.code, f.jt, f.jf, f.k);
  printf("};\n");
  seccomp_release(ctx);
  return 0;
}

