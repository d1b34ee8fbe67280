/*
 * forkpoint-sandbox: forkpoint's one sandbox runtime (docs/sandbox.md).
 *
 * A program of its own, not a Node addon: the kernel refuses unshare(CLONE_NEWUSER) and
 * setns() into a user namespace in a multithreaded process, and Node always runs threads.
 *
 *   forkpoint-sandbox holder [--persist PIDFILE]
 *       Holds a mount namespace (in a user namespace mapping the caller to its root, unless
 *       the caller is root) in which overlays are mounted on request. Requests and answers
 *       are frames on stdin and stdout.
 *   forkpoint-sandbox mount OPTIONS TARGET [OPTIONS TARGET ...]
 *   forkpoint-sandbox unmount TARGET ...
 *       Mount overlays in (or take them out of) the caller's own mount namespace: root's
 *       branch paths, which every tool of the host can use. All or none for mount.
 *   forkpoint-sandbox probe-net
 *       Exits 0 when a network namespace of our own can be had here.
 *   forkpoint-sandbox run
 *       Runs one command isolated. The request is one frame on fd 3 (a socket); answers
 *       (`event=ready`, `event=error`) come back on it. stdin, stdout and stderr are the
 *       command's own. The exit status is the command's (128 + N for signal N), 125 when the
 *       sandbox could not be set up.
 *
 * A frame is a 32-bit little-endian byte count, then that many bytes of `key=value\0`
 * fields; a key may repeat (argv, env, ...), in order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "egress.h"
#include "seccomp-filter.h" /* build/, from native/seccompFilter.c */

#define MAX_FRAME (16u << 20)
#define MAX_FIELDS 65536
/* Root's sandboxes run as host ids START + the id inside: root's range in /etc/subuid, else this one. */
#define SANDBOX_ID_BASE 1879048192u
#define SANDBOX_ID_COUNT 65536u
#define CONTROL_FD 3

extern char **environ;

/* ---------- frames ---------- */

struct frame {
  char *data;
  size_t len;
};

static int read_full(int fd, void *buf, size_t n) {
  for (size_t done = 0; done < n;) {
    ssize_t r = read(fd, (char *)buf + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    done += (size_t)r;
  }
  return 0;
}

static int write_full(int fd, const void *buf, size_t n) {
  for (size_t done = 0; done < n;) {
    ssize_t w = write(fd, (const char *)buf + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    done += (size_t)w;
  }
  return 0;
}

/* 0 on a frame, -1 at end of input or on a malformed frame. */
static int read_frame(int fd, struct frame *f) {
  unsigned char head[4];
  if (read_full(fd, head, 4) != 0) return -1;
  uint32_t len = head[0] | head[1] << 8 | head[2] << 16 | (uint32_t)head[3] << 24;
  if (len > MAX_FRAME) return -1;
  f->data = malloc(len + 1);
  if (!f->data || read_full(fd, f->data, len) != 0) return -1;
  f->data[len] = '\0';
  f->len = len;
  return len == 0 || f->data[len - 1] == '\0' ? 0 : -1;
}

/* The values of every `key=` field, in order, NULL-terminated. */
static char **values(const struct frame *f, const char *key, size_t *count) {
  size_t n = 0, klen = strlen(key);
  char **out = calloc(MAX_FIELDS + 1, sizeof *out);
  for (char *p = f->data; p < f->data + f->len && n < MAX_FIELDS; p += strlen(p) + 1)
    if (strncmp(p, key, klen) == 0 && p[klen] == '=') out[n++] = p + klen + 1;
  if (count) *count = n;
  return out;
}

static const char *value(const struct frame *f, const char *key, const char *fallback) {
  char **all = values(f, key, NULL);
  const char *v = all[0] ? all[0] : fallback;
  free(all);
  return v;
}

/* send_frame(fd, "key", "value", ..., NULL) */
static void send_frame(int fd, ...) {
  char buf[8192];
  size_t len = 4;
  va_list ap;
  va_start(ap, fd);
  for (const char *k; (k = va_arg(ap, const char *));) {
    const char *v = va_arg(ap, const char *);
    int n = snprintf(buf + len, sizeof buf - len, "%s=%s", k, v);
    if (n < 0 || (size_t)n >= sizeof buf - len) break;
    len += (size_t)n + 1;
  }
  va_end(ap);
  uint32_t body = (uint32_t)(len - 4);
  unsigned char head[4] = {body & 255, body >> 8 & 255, body >> 16 & 255, body >> 24};
  memcpy(buf, head, 4);
  write_full(fd, buf, len);
}

/* ---------- failing ---------- */

static int error_fd = -1;

static void fail(const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (error_fd >= 0) send_frame(error_fd, "event", "error", "message", msg, NULL);
  else fprintf(stderr, "forkpoint-sandbox: %s\n", msg);
  _exit(125);
}

#define CHECK(call, ...) \
  do {                   \
    if ((call) != 0) fail(__VA_ARGS__); \
  } while (0)

/* ---------- small helpers ---------- */

static void put(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write_full(fd, text, strlen(text)) != 0) fail("%s: %s", path, strerror(errno));
  close(fd);
}

/*
 * Die with our parent (SIGKILL when it dies). A change of credentials (a new user
 * namespace, setresuid) clears this, so it is armed again after each; `parent` is the pid
 * it had before, to tell whether it died meanwhile.
 */
static void die_with(pid_t parent) {
  CHECK(prctl(PR_SET_PDEATHSIG, SIGKILL), "prctl: %s", strerror(errno));
  if (getppid() != parent) _exit(125);
}

static void mkdirs(const char *path, mode_t mode) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    mkdir(buf, mode);
    *p = '/';
  }
  mkdir(buf, mode);
}

/* A mount point for `src` at `dst`: a directory, or an empty file for anything else. */
static void mount_point_for(const char *src, const char *dst) {
  struct stat st;
  if (stat(src, &st) != 0) fail("cannot expose %s: %s", src, strerror(errno));
  if (S_ISDIR(st.st_mode)) return mkdirs(dst, 0755);
  char parent[4096];
  snprintf(parent, sizeof parent, "%s", dst);
  char *slash = strrchr(parent, '/');
  if (slash && slash != parent) {
    *slash = '\0';
    mkdirs(parent, 0755);
  }
  int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
}

static void write_map(pid_t pid, const char *file, const char *map) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/%s", pid, file);
  put(path, map);
}

/* ---------- holder ---------- */

static void become_namespace_root(int extra_flags) {
  uid_t uid = getuid();
  gid_t gid = getgid();
  int userns = geteuid() != 0;
  CHECK(unshare((userns ? CLONE_NEWUSER : 0) | CLONE_NEWNS | extra_flags), "unshare: %s", strerror(errno));
  if (!userns) return;
  char map[64];
  put("/proc/self/setgroups", "deny");
  snprintf(map, sizeof map, "0 %u 1", uid);
  put("/proc/self/uid_map", map);
  snprintf(map, sizeof map, "0 %u 1", gid);
  put("/proc/self/gid_map", map);
}

/* A user namespace of its own, the same ids inside: capabilities over the namespaces made so far (the network's rules, setns out) are gone. */
static void drop_namespace_powers(void) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  char map[64];
  CHECK(unshare(CLONE_NEWUSER), "unshare: %s", strerror(errno));
  put("/proc/self/setgroups", "deny");
  snprintf(map, sizeof map, "%u %u 1", uid, uid);
  put("/proc/self/uid_map", map);
  snprintf(map, sizeof map, "%u %u 1", gid, gid);
  put("/proc/self/gid_map", map);
}

static void write_pidfile(const char *pidfile) {
  char stat[1024] = {0}, tmp[4096], line[128];
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, stat, sizeof stat - 1);
  if (fd >= 0) close(fd);
  char *p = n > 0 ? strrchr(stat, ')') : NULL;
  for (int field = 2; p && field < 22; field++) p = strchr(p + 1, ' ');
  if (!p) fail("cannot read this process's start time");
  snprintf(line, sizeof line, "%d %.*s\n", getpid(), (int)strcspn(p + 1, " "), p + 1);
  snprintf(tmp, sizeof tmp, "%s.tmp", pidfile);
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write_full(fd, line, strlen(line)) != 0 || fsync(fd) != 0) fail("%s: %s", tmp, strerror(errno));
  close(fd);
  CHECK(rename(tmp, pidfile), "%s: %s", pidfile, strerror(errno));
}

static const char *mount_overlay(const char *options, const char *target) {
  static char why[4200];
  if (mount("overlay", target, "overlay", 0, options) != 0) {
    snprintf(why, sizeof why, "cannot mount overlayfs at %s: %s", target, strerror(errno));
    return why;
  }
  /* shared: a sandbox's copy of the namespace loses it as soon as it is unmounted here */
  if (mount("none", target, NULL, MS_SHARED, NULL) != 0) {
    snprintf(why, sizeof why, "cannot share %s: %s", target, strerror(errno));
    umount2(target, MNT_DETACH);
    return why;
  }
  return NULL;
}

static int holder(int argc, char **argv) {
  const char *pidfile = argc >= 4 && strcmp(argv[2], "--persist") == 0 ? argv[3] : NULL;
  int in = 0, out = 1;
  signal(SIGPIPE, SIG_IGN);
  become_namespace_root(0);
  CHECK(mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL), "cannot make / private: %s", strerror(errno));
  if (pidfile) write_pidfile(pidfile);
  send_frame(out, "event", "ready", NULL);
  for (struct frame f; read_frame(in, &f) == 0; free(f.data)) {
    const char *id = value(&f, "id", ""), *op = value(&f, "op", ""), *target = value(&f, "target", "");
    const char *why = NULL;
    static char buf[4200];
    if (strcmp(op, "mount") == 0) why = mount_overlay(value(&f, "options", ""), target);
    else if (strcmp(op, "unmount") == 0) {
      if (umount2(target, MNT_DETACH) != 0) snprintf(buf, sizeof buf, "cannot unmount %s: %s", target, strerror(errno)), why = buf;
    } else if (strcmp(op, "detach") == 0 && pidfile) {
      send_frame(out, "id", id, "event", "ok", NULL);
      int null = open("/dev/null", O_RDWR);
      dup2(null, 0), dup2(null, 1), dup2(null, 2);
      for (;;) pause();
    } else why = "unknown request";
    if (why) send_frame(out, "id", id, "event", "error", "message", why, NULL);
    else send_frame(out, "id", id, "event", "ok", NULL);
  }
  return 0; /* stdin closed: the process that started us is gone, and our mounts go with us */
}

/* ---------- mounts in the caller's namespace ---------- */

static int host_mount(int argc, char **argv) {
  for (int i = 2; i + 1 < argc; i += 2) {
    if (mount("overlay", argv[i + 1], "overlay", 0, argv[i]) == 0) continue;
    int err = errno;
    for (int j = i - 2; j >= 2; j -= 2) umount2(argv[j + 1], MNT_DETACH);
    fprintf(stderr, "cannot mount overlayfs at %s: %s\n", argv[i + 1], strerror(err));
    return 1;
  }
  return 0;
}

/* Lazy, so a shell still inside does not keep it; a target not mounted (any more) is fine. */
static int host_unmount(int argc, char **argv) {
  int status = 0;
  for (int i = 2; i < argc; i++) {
    if (umount2(argv[i], MNT_DETACH) == 0 || errno == EINVAL || errno == ENOENT) continue;
    fprintf(stderr, "cannot unmount %s: %s\n", argv[i], strerror(errno));
    status = 1;
  }
  return status;
}

/* ---------- run ---------- */

struct spec {
  /* pin: paths inside the view bound onto themselves, so they cannot be renamed or removed; protect: the same, read-only */
  char **argv, **env, **expose, **hide, **pin, **protect, **cgroups;
  const char *cwd, *view, *workspace, *home, *holder, *scratch_size;
  /* egress: the egress proxy's unix socket, the only way out of the sandbox's own network, and the token its relay shows it; ca_pem: the one CA its TLS clients trust */
  const char *egress, *egress_token, *ca_pem;
  int net_own, new_root, pty;
  rlim_t as, nproc, cpu;
};

static rlim_t number(const struct frame *f, const char *key) { return strtoull(value(f, key, "0"), NULL, 10); }

static struct spec parse_spec(const struct frame *f) {
  struct spec s = {0};
  size_t argc;
  s.argv = values(f, "argv", &argc);
  if (argc == 0) fail("no command to run");
  s.env = values(f, "env", NULL);
  s.expose = values(f, "expose", NULL);
  s.hide = values(f, "hide", NULL);
  s.pin = values(f, "pin", NULL);
  s.protect = values(f, "protect", NULL);
  s.cgroups = values(f, "cgroup", NULL);
  s.view = value(f, "view", NULL);
  s.workspace = value(f, "workspace", s.view);
  s.cwd = value(f, "cwd", s.workspace ? s.workspace : ".");
  s.home = value(f, "home", "/home/sandbox");
  s.holder = value(f, "holder", NULL);
  s.scratch_size = value(f, "scratch-size", "50%");
  const char *net = value(f, "net", "none");
  s.egress = value(f, "egress", NULL);
  s.egress_token = value(f, "egress-token", NULL);
  s.ca_pem = value(f, "ca", NULL);
  s.net_own = strcmp(net, "host") != 0;
  if (strcmp(net, "proxy") == 0 ? !s.egress || !s.egress_token : s.egress != NULL) fail("net=proxy goes with egress=SOCKET and egress-token=TOKEN, and only it");
  if (s.egress_token && (strlen(s.egress_token) == 0 || strlen(s.egress_token) > 128 || strpbrk(s.egress_token, " \n"))) fail("egress-token is one word of at most 128 characters");
  s.new_root = strcmp(value(f, "root", "new"), "new") == 0;
  s.pty = strcmp(value(f, "terminal", "none"), "pty") == 0;
  s.as = number(f, "rlimit-as"), s.nproc = number(f, "rlimit-nproc"), s.cpu = number(f, "rlimit-cpu");
  if (s.new_root && (!s.view || !s.workspace)) fail("a sandbox with a new root needs view and workspace");
  if (!s.new_root && s.ca_pem) fail("ca goes with a new root; in root=host the caller points the CA variables at its file");
  return s;
}

static int same_namespace(const char *a, const char *b) {
  struct stat x, y;
  return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_ino == y.st_ino && x.st_dev == y.st_dev;
}

/* Enter a holder's mount namespace (and its user namespace when it has its own); 1 when we entered a user namespace. */
static int enter_holder(const char *pid) {
  char user[64], mnt[64];
  snprintf(user, sizeof user, "/proc/%s/ns/user", pid);
  snprintf(mnt, sizeof mnt, "/proc/%s/ns/mnt", pid);
  int own_user = !same_namespace(user, "/proc/self/ns/user");
  int ufd = open(user, O_RDONLY | O_CLOEXEC), mfd = open(mnt, O_RDONLY | O_CLOEXEC);
  if (ufd < 0 || mfd < 0) fail("cannot enter the branch's namespace: %s", strerror(errno));
  if (own_user) CHECK(setns(ufd, CLONE_NEWUSER), "setns user: %s", strerror(errno));
  CHECK(setns(mfd, CLONE_NEWNS), "setns mnt: %s", strerror(errno));
  close(ufd), close(mfd);
  return own_user;
}

/*
 * A user namespace with these maps (written by us, root in the parent); its fd. A child
 * makes it and lives until we have opened it: it waits for the end of a pipe we hold, which
 * comes when we close it or die, so it never outlives us (PDEATHSIG would not do: a new user
 * namespace clears it, and a death between that and re-arming it would leak the child).
 */
static int make_userns(const char *uid_map, const char *gid_map) {
  int made[2], release[2];
  CHECK(pipe2(made, O_CLOEXEC) || pipe2(release, O_CLOEXEC), "pipe: %s", strerror(errno));
  pid_t child = fork();
  if (child < 0) fail("fork: %s", strerror(errno));
  if (child == 0) {
    char c;
    close(made[0]), close(release[1]);
    if (unshare(CLONE_NEWUSER) != 0) _exit(1);
    if (write(made[1], "u", 1) != 1) _exit(1);
    while (read(release[0], &c, 1) < 0 && errno == EINTR) continue;
    _exit(0);
  }
  char c;
  close(made[1]), close(release[0]);
  if (read(made[0], &c, 1) != 1) fail("cannot make a user namespace");
  close(made[0]);
  write_map(child, "uid_map", uid_map);
  write_map(child, "gid_map", gid_map);
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/ns/user", child);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("%s: %s", path, strerror(errno));
  close(release[1]);
  waitpid(child, NULL, 0);
  return fd;
}

static int clone_tree(const char *path, int recursive) {
  int fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0));
  if (fd < 0) fail("cannot open the view %s: %s", path, strerror(errno));
  return fd;
}

/* The first id of root's range in `file` (/etc/subuid, /etc/subgid) when it holds SANDBOX_ID_COUNT ids, else SANDBOX_ID_BASE. */
static unsigned long sub_id_start(const char *file) {
  char line[256];
  unsigned long start = SANDBOX_ID_BASE, first, count;
  FILE *f = fopen(file, "re");
  while (f && fgets(line, sizeof line, f))
    if ((sscanf(line, "root:%lu:%lu", &first, &count) == 2 || sscanf(line, "0:%lu:%lu", &first, &count) == 2) && first > 0 && count >= SANDBOX_ID_COUNT) {
      start = first;
      break;
    }
  if (f) fclose(f);
  return start;
}

/* Why a sandbox is weaker than docs/sandbox.md promises, for the caller's `warnings`. */
static char weaker[512];

static int idmapped(int tree, int userns) {
  struct mount_attr idmap = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
  return mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &idmap, sizeof idmap) == 0;
}

/*
 * The view for root's sandbox, idmapped with `userns` so that the workspace's files keep
 * their owners inside and files written inside belong to their owners on disk. Mounts under
 * the view cannot always be idmapped (overlayfs cannot): then the view goes without them. A
 * view that cannot be idmapped at all (an overlay branch) is returned as it is, -1 in *tree.
 */
static void idmapped_view(const char *view, int userns, int *tree) {
  *tree = clone_tree(view, 1);
  if (idmapped(*tree, userns)) return;
  close(*tree);
  *tree = clone_tree(view, 0);
  if (idmapped(*tree, userns)) {
    snprintf(weaker, sizeof weaker, "mounts under %s are not shown in the sandbox (they cannot be idmapped)", view);
    return;
  }
  close(*tree);
  *tree = -1;
}

/*
 * Root's sandbox runs in a user namespace mapping its ids to an unprivileged range of the
 * host (sub_id_start), with the view idmapped the same way. A view that cannot be idmapped
 * (overlayfs) gets an identity map instead: root inside is the host's uid 0, with
 * capabilities only in that namespace, no new privileges and the seccomp filter, and the
 * result's warnings say so. Returns the view's detached tree.
 */
static int root_user_namespace(const struct spec *s) {
  char uid_map[64], gid_map[64];
  snprintf(uid_map, sizeof uid_map, "0 %lu %u", sub_id_start("/etc/subuid"), SANDBOX_ID_COUNT);
  snprintf(gid_map, sizeof gid_map, "0 %lu %u", sub_id_start("/etc/subgid"), SANDBOX_ID_COUNT);
  int userns = make_userns(uid_map, gid_map), tree = -1;
  if (s->new_root) idmapped_view(s->view, userns, &tree);
  if (s->new_root && tree < 0) {
    close(userns);
    snprintf(uid_map, sizeof uid_map, "0 0 %u", SANDBOX_ID_COUNT);
    userns = make_userns(uid_map, uid_map);
    tree = clone_tree(s->view, 1);
    snprintf(weaker, sizeof weaker,
             "the sandbox runs as the host's uid 0 (without capabilities over the host): its view %s cannot be idmapped (an overlay "
             "branch's cannot); a branch made with --backend copy runs in the unprivileged range",
             s->view);
  }
  CHECK(setns(userns, CLONE_NEWUSER), "setns: %s", strerror(errno));
  close(userns);
  /* our host uid 0 means nothing in there: become its root */
  CHECK(setgroups(0, NULL) || setresgid(0, 0, 0) || setresuid(0, 0, 0), "cannot become the namespace's root: %s", strerror(errno));
  /* a change of ids makes a process undumpable, its /proc files then root's (the host's): we write them */
  CHECK(prctl(PR_SET_DUMPABLE, 1), "prctl: %s", strerror(errno));
  return tree;
}

static void bind_mount(const char *src, const char *dst, int readonly) {
  CHECK(mount(src, dst, NULL, MS_BIND | MS_REC, NULL), "bind %s: %s", src, strerror(errno));
  struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID};
  if (readonly) CHECK(mount_setattr(AT_FDCWD, dst, AT_RECURSIVE, &ro, sizeof ro), "read-only %s: %s", dst, strerror(errno));
}

/*
 * Root's record and replay run on the host's file system as uid 0: the host-wide settings
 * under /proc/sys and /sys (a core pattern or a modprobe path runs a program as the host's
 * root, outside every namespace) are made read-only in a mount namespace of their own, which
 * the command, in a nested user namespace, cannot remount.
 */
static void read_only_host_settings(void) {
  static const char *settings[] = {"/proc/sys", "/proc/sysrq-trigger", "/sys", NULL};
  CHECK(mount("none", "/", NULL, MS_REC | MS_SLAVE, NULL), "mount propagation: %s", strerror(errno));
  for (const char **p = settings; *p; p++)
    if (access(*p, F_OK) == 0) bind_mount(*p, *p, 1);
}

static void path_in(char *buf, size_t size, const char *root, const char *path) { snprintf(buf, size, "%s%s", root, path); }

/* The host's system directories, read-only, and the merged-/usr links as links. */
static void bind_system(void) {
  static const char *dirs[] = {"usr", "etc", "opt", "bin", "sbin", "lib", "lib32", "lib64", "libx32", NULL};
  for (const char **d = dirs; *d; d++) {
    char src[256], dst[256], target[256];
    struct stat st;
    snprintf(src, sizeof src, "/oldroot/%s", *d);
    snprintf(dst, sizeof dst, "/newroot/%s", *d);
    if (lstat(src, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      ssize_t n = readlink(src, target, sizeof target - 1);
      if (n > 0) target[n] = '\0', symlink(target, dst);
    } else if (S_ISDIR(st.st_mode)) {
      mkdir(dst, 0755);
      bind_mount(src, dst, 1);
    }
  }
}

static void bind_from_scratch(const char *name, const char *dst, mode_t mode) {
  char src[256];
  snprintf(src, sizeof src, "/scratch/%s", name);
  mkdirs(src, mode);
  chmod(src, mode);
  mkdirs(dst, 0755);
  bind_mount(src, dst, 0);
}

/* A minimal /dev: a few device nodes of the host, a private devpts, shm from the scratch tmpfs. */
static void make_dev(void) {
  static const char *nodes[] = {"null", "zero", "full", "random", "urandom", "tty", NULL};
  mkdir("/newroot/dev", 0755);
  CHECK(mount("tmpfs", "/newroot/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k"), "mount /dev: %s", strerror(errno));
  for (const char **n = nodes; *n; n++) {
    char src[64], dst[64];
    snprintf(src, sizeof src, "/oldroot/dev/%s", *n);
    snprintf(dst, sizeof dst, "/newroot/dev/%s", *n);
    int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd >= 0) close(fd);
    if (mount(src, dst, NULL, MS_BIND, NULL) != 0) unlink(dst);
  }
  mkdir("/newroot/dev/pts", 0755);
  if (mount("devpts", "/newroot/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") == 0) symlink("pts/ptmx", "/newroot/dev/ptmx");
  symlink("/proc/self/fd", "/newroot/dev/fd");
  symlink("/proc/self/fd/0", "/newroot/dev/stdin");
  symlink("/proc/self/fd/1", "/newroot/dev/stdout");
  symlink("/proc/self/fd/2", "/newroot/dev/stderr");
  bind_from_scratch("shm", "/newroot/dev/shm", 01777);
  /* no device node (nor file posing as one) can be made in it */
  CHECK(mount(NULL, "/newroot/dev", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k"), "read-only /dev: %s", strerror(errno));
}

/* A fresh /proc of the sandbox's PID namespace, with the host-wide knobs in it read-only. */
static void make_proc(void) {
  static const char *knobs[] = {"sys", "sysrq-trigger", "irq", "bus", "fs", "latency_stats", "timer_list", NULL};
  mkdir("/newroot/proc", 0755);
  CHECK(mount("proc", "/newroot/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL), "mount /proc: %s", strerror(errno));
  for (const char **k = knobs; *k; k++) {
    char path[64];
    snprintf(path, sizeof path, "/newroot/proc/%s", *k);
    if (access(path, F_OK) == 0) bind_mount(path, path, 1);
  }
}

static void hide(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) CHECK(mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=0755"), "hide %s: %s", path, strerror(errno));
  else if (!S_ISLNK(st.st_mode)) bind_mount("/empty", path, 1);
}

/*
 * A path of the view bound onto itself: a mount point, which cannot be renamed, removed or
 * replaced from inside; read-only too with `read_only`. A symlink or a missing path is left
 * alone (a bind would land on what the link names).
 */
static void pin(const char *path, int read_only) {
  struct stat st;
  if (lstat(path, &st) != 0 || S_ISLNK(st.st_mode)) return;
  bind_mount(path, path, read_only);
}

/*
 * The effects proxy's CA, the only one the sandbox's TLS clients trust: read-only at
 * /run/forkpoint/ca.pem (where the environment's *_CA_* variables point) and over the
 * system's bundle, for clients that read only that.
 */
static void show_ca_bundle(const char *pem) {
  int fd = open("/scratch/forkpoint-ca.pem", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
  CHECK(fd < 0 || write_full(fd, pem, strlen(pem)) != 0, "cannot write the effects proxy's CA: %s", strerror(errno));
  close(fd);
  mkdirs("/newroot/run/forkpoint", 0755);
  close(open("/newroot/run/forkpoint/ca.pem", O_WRONLY | O_CREAT | O_CLOEXEC, 0444));
  bind_mount("/scratch/forkpoint-ca.pem", "/newroot/run/forkpoint/ca.pem", 1);
  if (access("/newroot/etc/ssl/certs/ca-certificates.crt", F_OK) == 0) bind_mount("/scratch/forkpoint-ca.pem", "/newroot/etc/ssl/certs/ca-certificates.crt", 1);
}

/*
 * The new root, as bubblewrap builds one: a tmpfs holding read-only binds of the system
 * directories, the view at the workspace's path, the exposed paths, a fresh /proc, a
 * minimal /dev and private /tmp, /var/tmp, /run, /dev/shm and HOME, all of them on one
 * size-capped scratch tmpfs. The host's root stays out of reach.
 */
static void make_root(const struct spec *s, int view_tree) {
  char dst[4096];
  CHECK(mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m"), "mount tmpfs: %s", strerror(errno));
  CHECK(chdir("/tmp"), "chdir: %s", strerror(errno));
  mkdir("newroot", 0755), mkdir("oldroot", 0755), mkdir("scratch", 0755);
  close(open("empty", O_WRONLY | O_CREAT | O_CLOEXEC, 0444));
  CHECK(syscall(SYS_pivot_root, ".", "oldroot"), "pivot_root: %s", strerror(errno));
  CHECK(chdir("/"), "chdir: %s", strerror(errno));
  char scratch[64];
  snprintf(scratch, sizeof scratch, "mode=0755,size=%s", s->scratch_size);
  CHECK(mount("tmpfs", "/scratch", "tmpfs", MS_NOSUID | MS_NODEV, scratch), "mount scratch tmpfs (size %s): %s", s->scratch_size, strerror(errno));
  CHECK(mount("tmpfs", "/newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m"), "mount root tmpfs: %s", strerror(errno));
  bind_system();
  mkdirs("/newroot/var", 0755);
  bind_from_scratch("tmp", "/newroot/tmp", 01777);
  bind_from_scratch("var-tmp", "/newroot/var/tmp", 01777);
  bind_from_scratch("run", "/newroot/run", 0755);
  path_in(dst, sizeof dst, "/newroot", s->home);
  bind_from_scratch("home", dst, 0700);
  make_dev();
  make_proc();
  for (char **e = s->expose; *e; e++) {
    char src[4096];
    path_in(src, sizeof src, "/oldroot", *e);
    path_in(dst, sizeof dst, "/newroot", *e);
    mount_point_for(src, dst);
    bind_mount(src, dst, 1);
  }
  if (s->ca_pem) show_ca_bundle(s->ca_pem);
  path_in(dst, sizeof dst, "/newroot", s->workspace);
  mkdirs(dst, 0755);
  CHECK(move_mount(view_tree, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH), "cannot mount the view at %s: %s", s->workspace, strerror(errno));
  close(view_tree);
  /* pinned before protected: a later bind of a pinned directory would cover what is protected in it */
  for (char **p = s->pin; *p; p++) {
    path_in(dst, sizeof dst, "/newroot", *p);
    pin(dst, 0);
  }
  for (char **p = s->protect; *p; p++) {
    path_in(dst, sizeof dst, "/newroot", *p);
    pin(dst, 1);
  }
  for (char **h = s->hide; *h; h++) {
    path_in(dst, sizeof dst, "/newroot", *h);
    hide(dst);
  }
  CHECK(mount(NULL, "/newroot", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL), "read-only root: %s", strerror(errno));
  CHECK(umount2("/oldroot", MNT_DETACH), "cannot let go of the old root: %s", strerror(errno));
  CHECK(chdir("/newroot"), "chdir: %s", strerror(errno));
  CHECK(syscall(SYS_pivot_root, ".", "."), "pivot_root: %s", strerror(errno));
  CHECK(umount2(".", MNT_DETACH), "cannot let go of the setup root: %s", strerror(errno));
  CHECK(chdir("/"), "chdir: %s", strerror(errno));
}

static void loopback_up(void) {
  int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifreq req = {0};
  snprintf(req.ifr_name, sizeof req.ifr_name, "lo");
  req.ifr_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING;
  if (sock < 0 || ioctl(sock, SIOCSIFFLAGS, &req) != 0) fail("cannot bring up loopback: %s", strerror(errno));
  close(sock);
}

static void set_limit(int resource, rlim_t v) {
  struct rlimit lim = {v, v};
  if (v) CHECK(setrlimit(resource, &lim), "setrlimit: %s", strerror(errno));
}

/* ---------- the terminal of an interactive command ---------- */

struct pty {
  int master, slave;
};

static void copy_window_size(int from, int to) {
  struct winsize size;
  if (ioctl(from, TIOCGWINSZ, &size) == 0) ioctl(to, TIOCSWINSZ, &size);
}

/* A pty for the command, on the devpts of the root we are in, the size of the caller's terminal on fd 0. */
static struct pty open_pty(void) {
  struct pty p = {.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), .slave = -1};
  const char *name = p.master < 0 || grantpt(p.master) != 0 || unlockpt(p.master) != 0 ? NULL : ptsname(p.master);
  if (name) p.slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (p.slave < 0) fail("cannot open a pty: %s", strerror(errno));
  copy_window_size(0, p.master);
  return p;
}

/* The pty is our stdin, stdout and stderr (and so the command's); the caller's terminal is gone. */
static void take_pty(struct pty p) {
  CHECK(dup2(p.slave, 0) < 0 || dup2(p.slave, 1) < 0 || dup2(p.slave, 2) < 0, "dup2: %s", strerror(errno));
  close(p.slave), close(p.master);
}

/* Hand `fd` over the unix socket `sock`. */
static void send_fd(int sock, int fd) {
  char byte = 'p';
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int))];
  } control = {0};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  CHECK(sendmsg(sock, &msg, 0) != 1, "cannot hand the pty over: %s", strerror(errno));
}

/* The fd handed over on `sock`; -1 when none came (the sandbox failed before). */
static int receive_fd(int sock) {
  char byte;
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int))];
  } control;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
  ssize_t n;
  while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) continue;
  struct cmsghdr *c = n == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
  int fd = -1;
  if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

/* In the sandbox's new root: a pty of its devpts, its master handed to the runtime on `sock`, its slave our stdin, stdout and stderr. */
static void pty_for_command(int sock) {
  struct pty p = open_pty();
  send_fd(sock, p.master);
  close(sock);
  take_pty(p);
}

static volatile sig_atomic_t resized = 0;

static void on_resize(int sig) {
  (void)sig;
  resized = 1;
}

/*
 * Relay the caller's terminal (raw while we do) and the command's pty until every process
 * holding the pty is gone; window size changes follow.
 */
static void relay(int master) {
  struct termios saved, raw;
  int restore = tcgetattr(0, &saved) == 0;
  if (restore) raw = saved, cfmakeraw(&raw), tcsetattr(0, TCSADRAIN, &raw);
  sigset_t winch, others;
  sigemptyset(&winch), sigaddset(&winch, SIGWINCH);
  sigprocmask(SIG_BLOCK, &winch, &others);
  struct sigaction resize = {.sa_handler = on_resize};
  sigaction(SIGWINCH, &resize, NULL);
  struct pollfd fds[2] = {{.fd = master, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
  char buf[16384];
  for (;;) {
    if (resized) resized = 0, copy_window_size(0, master);
    if (ppoll(fds, 2, NULL, &others) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) {
      ssize_t n = read(master, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || write_full(1, buf, (size_t)n) != 0) break; /* EIO: the pty's last holder is gone */
    }
    if (fds[1].revents) {
      ssize_t n = read(0, buf, sizeof buf);
      if (n <= 0) fds[1].fd = -1;
      else write_full(master, buf, (size_t)n);
    }
  }
  if (restore) tcsetattr(0, TCSADRAIN, &saved);
  close(master);
}

/* ---------- the command's last steps ---------- */

/* Installed last, right before exec: everything above still needs mount, unshare and setns. */
static void install_seccomp(void) {
  struct sock_fprog prog = {.len = sizeof SECCOMP_FILTER / sizeof *SECCOMP_FILTER, .filter = (struct sock_filter *)SECCOMP_FILTER};
  CHECK(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog), "seccomp: %s", strerror(errno));
}

/*
 * A session of its own, so the caller's terminal is not the command's (no TIOCSTI into it,
 * /dev/tty opens nothing); the pty forkpoint relays is, when there is one (on fd 0).
 */
static void own_session(int pty) {
  if (setsid() < 0) fail("setsid: %s", strerror(errno));
  if (pty && ioctl(0, TIOCSCTTY, 0) != 0) fail("cannot take the terminal: %s", strerror(errno));
}

/* A new anonymous session keyring: the caller's is not the command's (keyctl is denied besides). */
static void own_keyring(void) { syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL); }

/*
 * No file capabilities from the command: CAP_SETFCAP leaves the bounding set (and no
 * capability stays ambient), so nothing it runs can write `security.capability`. With
 * root's identity map that xattr would name the host's root, and a copy of python given
 * cap_setuid would make every local user root, during the run and after it (the
 * normalisation after the run clears mode bits, which these are not). Without
 * CAP_SETPCAP (no capability in its namespace) the command could not set one anyway.
 */
static void drop_file_capabilities(void) {
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) fail("cannot clear ambient capabilities: %s", strerror(errno));
  if (prctl(PR_CAPBSET_DROP, CAP_SETFCAP, 0, 0, 0) != 0 && errno != EPERM) fail("cannot drop CAP_SETFCAP: %s", strerror(errno));
}

/* The command: its own user namespace (so every mount above is locked), no new privileges, then exec. */
static void exec_command(const struct spec *s, int ready_fd, int pty) {
  char c;
  if (read(ready_fd, &c, 1) != 1) _exit(125); /* the init wrote our id maps */
  close(ready_fd);
  own_session(pty);
  own_keyring();
  CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs: %s", strerror(errno));
  drop_file_capabilities();
  set_limit(RLIMIT_AS, s->as);
  set_limit(RLIMIT_NPROC, s->nproc);
  set_limit(RLIMIT_CPU, s->cpu);
  if (chdir(s->cwd) != 0) fail("cannot enter %s: %s", s->cwd, strerror(errno));
  install_seccomp();
  send_frame(CONTROL_FD, "event", "ready", "warning", weaker, NULL);
  close(CONTROL_FD);
  error_fd = -1;
  environ = s->env;
  signal(SIGPIPE, SIG_DFL);
  execvp(s->argv[0], s->argv);
  fprintf(stderr, "forkpoint-sandbox: cannot run %s: %s\n", s->argv[0], strerror(errno));
  _exit(127);
}

static int status_code(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

/* The sandbox's network leads only to the egress port, whose listeners go out to the runtime's relay. */
static void egress_out(int sock) {
  int fds[EGRESS_LISTENERS];
  char why[256];
  if (egress_prepare(fds, why, sizeof why) != 0) fail("%s", why);
  CHECK(egress_send(sock, fds), "cannot hand the egress listeners over: %s", strerror(errno));
  for (int i = 0; i < EGRESS_LISTENERS; i++)
    if (fds[i] >= 0) close(fds[i]);
  close(sock);
}

/*
 * The relay for the sandbox's egress listeners, which come on `sock[0]` once the sandbox
 * has made them: a child forked before any namespace or id changes, so it stays outside the
 * sandbox with the caller's ids, in a process group of its own with its handlers. It ends
 * when this process has: the write end of its `alive` pipe is ours alone (close-on-exec).
 */
static void start_egress_relay(int sock[2], const char *proxy, const char *token) {
  int alive[2];
  CHECK(pipe2(alive, O_CLOEXEC), "pipe: %s", strerror(errno));
  pid_t relay = fork();
  if (relay < 0) fail("fork: %s", strerror(errno));
  if (relay > 0) {
    close(sock[0]), close(alive[0]);
    return;
  }
  close(alive[1]);
  setpgid(0, 0);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  dup2(null, 0), dup2(null, 1), dup2(null, 2);
  close(CONTROL_FD), close(sock[1]);
  int fds[EGRESS_LISTENERS];
  egress_receive(sock[0], fds);
  if (fds[EGRESS_TCP4] < 0) _exit(0); /* the sandbox failed before: its error says why */
  /* its memory holds the run's token: nothing of the caller's ids (the command's, in record and replay) may read it */
  prctl(PR_SET_DUMPABLE, 0);
  egress_relay(fds, proxy, token, alive[0]);
}

/* PID 1 of the sandbox: sets up, starts the command in a nested user namespace, reaps orphans, exits with the command. */
static int sandbox_init(const struct spec *s, int view_tree, const char *inner_map, int runtime_alive, int pty_sock, int egress_sock) {
  /* the runtime is outside our PID namespace (getppid() says 0): its end of a pipe tells whether it died */
  CHECK(prctl(PR_SET_PDEATHSIG, SIGKILL), "prctl: %s", strerror(errno));
  struct pollfd gone = {.fd = runtime_alive, .events = POLLIN};
  if (poll(&gone, 1, 0) != 0) _exit(125);
  close(runtime_alive);
  if (s->net_own) loopback_up();
  if (s->egress) egress_out(egress_sock);
  if (s->new_root) make_root(s, view_tree);
  if (pty_sock >= 0) pty_for_command(pty_sock);
  int sync[2], unshared[2];
  CHECK(pipe2(sync, O_CLOEXEC) || pipe2(unshared, O_CLOEXEC), "pipe: %s", strerror(errno));
  pid_t command = fork();
  if (command < 0) fail("fork: %s", strerror(errno));
  if (command == 0) {
    close(sync[1]), close(unshared[0]);
    pid_t init = getppid();
    CHECK(unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare: %s", strerror(errno));
    die_with(init);
    if (write(unshared[1], "u", 1) != 1) _exit(125);
    close(unshared[1]);
    exec_command(s, sync[0], pty_sock >= 0);
  }
  close(sync[0]), close(unshared[1]);
  /* the child unshares first: its word (or its end) says its namespace is made */
  char c;
  if (read(unshared[0], &c, 1) != 1) fail("the command did not get its user namespace");
  close(unshared[0]);
  char uid_map[48];
  snprintf(uid_map, sizeof uid_map, "%.*s", (int)strcspn(inner_map, "\n"), inner_map);
  write_map(command, "uid_map", uid_map);
  write_map(command, "gid_map", strchr(inner_map, '\n') + 1);
  write(sync[1], "m", 1);
  close(sync[1]);
  close(CONTROL_FD);
  error_fd = -1;
  /* the command, the same user outside, must not take over this process (its mounts, the caller's terminal) with ptrace */
  CHECK(prctl(PR_SET_DUMPABLE, 0), "prctl: %s", strerror(errno));
  for (int status;;) {
    pid_t done = waitpid(-1, &status, 0);
    if (done == command) return status_code(status);
    if (done < 0 && errno != EINTR) fail("lost the command process");
  }
}

static volatile pid_t init_pid = 0;
static volatile sig_atomic_t stopping = 0;

static void on_stop(int sig) {
  (void)sig;
  stopping = 1;
  if (init_pid > 0) kill(init_pid, SIGKILL);
}

/*
 * root=host with egress (a recorded agent): the network of its own leads only to the relay,
 * which lives while this process does (its `alive` pipe is close-on-exec), so the command is
 * a child and this process waits for it rather than exec in its place.
 */
static int run_host_root_egress(const struct spec *s, int egress_sock) {
  egress_out(egress_sock);
  send_frame(CONTROL_FD, "event", "ready", NULL);
  pid_t runtime = getpid();
  pid_t command = fork();
  if (command < 0) fail("fork: %s", strerror(errno));
  if (command == 0) {
    drop_namespace_powers();
    die_with(runtime); /* after the new user namespace, which clears the parent-death signal */
    close(CONTROL_FD);
    environ = s->env;
    if (s->cwd && chdir(s->cwd) != 0) fail("cannot enter %s: %s", s->cwd, strerror(errno));
    signal(SIGPIPE, SIG_DFL);
    execvp(s->argv[0], s->argv);
    fprintf(stderr, "forkpoint-sandbox: cannot run %s: %s\n", s->argv[0], strerror(errno));
    _exit(127);
  }
  init_pid = command;
  if (stopping) kill(command, SIGKILL);
  close(CONTROL_FD);
  error_fd = -1;
  for (int status;;) {
    if (waitpid(command, &status, 0) == command) return status_code(status);
    if (errno != EINTR) return 125;
  }
}

static int run(void) {
  struct frame f;
  error_fd = CONTROL_FD;
  if (fcntl(CONTROL_FD, F_SETFD, FD_CLOEXEC) != 0) {
    fprintf(stderr, "forkpoint-sandbox: run expects its request on fd 3\n");
    return 125;
  }
  if (read_frame(CONTROL_FD, &f) != 0) fail("no request, or a malformed one, on fd 3");
  struct spec s = parse_spec(&f);
  /* the command's pty is made in the sandbox (its own devpts); its master comes back on this socket */
  int pty_sock[2] = {-1, -1};
  if (s.pty && s.new_root && isatty(0)) CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pty_sock), "socketpair: %s", strerror(errno));
  struct sigaction stop = {.sa_handler = on_stop};
  sigaction(SIGTERM, &stop, NULL), sigaction(SIGINT, &stop, NULL), sigaction(SIGHUP, &stop, NULL);
  signal(SIGPIPE, SIG_IGN);
  pid_t caller = getppid();
  die_with(caller);
  for (char **c = s.cgroups; *c; c++) put(*c, "0");
  uid_t uid = getuid();
  gid_t gid = getgid();
  int isolate = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC | (s.net_own ? CLONE_NEWNET : 0);
  int egress_sock[2] = {-1, -1};
  if (s.egress) {
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, egress_sock), "socketpair: %s", strerror(errno));
    start_egress_relay(egress_sock, s.egress, s.egress_token);
  }
  char inner[96];
  int view_tree = -1, in_userns = s.holder ? enter_holder(s.holder) : 0;
  if (!s.new_root) {
    /* record and replay: only the network is closed; the file system is the caller's */
    if (uid == 0) {
      CHECK(unshare(CLONE_NEWNET | CLONE_NEWNS), "unshare: %s", strerror(errno));
      read_only_host_settings();
    } else {
      become_namespace_root(CLONE_NEWNET);
    }
    die_with(caller);
    if (s.net_own) loopback_up();
    if (s.egress) return run_host_root_egress(&s, egress_sock[1]);
    send_frame(CONTROL_FD, "event", "ready", NULL);
    close(CONTROL_FD);
    drop_namespace_powers();
    die_with(caller); /* after the new user namespace, which clears the parent-death signal */
    environ = s.env;
    if (s.cwd && chdir(s.cwd) != 0) fail("cannot enter %s: %s", s.cwd, strerror(errno));
    execvp(s.argv[0], s.argv);
    fprintf(stderr, "forkpoint-sandbox: cannot run %s: %s\n", s.argv[0], strerror(errno));
    return 127;
  }
  if (geteuid() == 0 && !in_userns) {
    CHECK(unshare(CLONE_NEWNS), "unshare: %s", strerror(errno));
    CHECK(mount("none", "/", NULL, MS_REC | MS_SLAVE, NULL), "mount propagation: %s", strerror(errno));
    view_tree = root_user_namespace(&s);
    snprintf(inner, sizeof inner, "0 0 %u\n0 0 %u", SANDBOX_ID_COUNT, SANDBOX_ID_COUNT);
    CHECK(unshare(isolate), "unshare: %s", strerror(errno));
  } else {
    if (in_userns) CHECK(unshare(isolate), "unshare: %s", strerror(errno));
    else become_namespace_root(isolate);
    snprintf(inner, sizeof inner, "%u 0 1\n%u 0 1", uid, gid);
  }
  CHECK(mount("none", "/", NULL, MS_REC | MS_SLAVE, NULL), "mount propagation: %s", strerror(errno));
  if (view_tree < 0) view_tree = clone_tree(s.view, 1);
  die_with(caller);
  int alive[2];
  CHECK(pipe2(alive, O_CLOEXEC), "pipe: %s", strerror(errno));
  pid_t init = fork();
  if (init < 0) fail("fork: %s", strerror(errno));
  if (init == 0) {
    close(alive[1]);
    if (pty_sock[0] >= 0) close(pty_sock[0]);
    _exit(sandbox_init(&s, view_tree, inner, alive[0], pty_sock[1], egress_sock[1]));
  }
  close(alive[0]);
  init_pid = init;
  if (stopping) kill(init, SIGKILL);
  close(view_tree);
  close(CONTROL_FD);
  error_fd = -1;
  if (egress_sock[1] >= 0) close(egress_sock[1]);
  if (pty_sock[0] >= 0) {
    close(pty_sock[1]);
    int master = receive_fd(pty_sock[0]);
    close(pty_sock[0]);
    if (master >= 0) relay(master);
  }
  for (int status;;) {
    if (waitpid(init, &status, 0) == init) return status_code(status);
    if (errno != EINTR) return 125;
  }
}

/* Exit 0 when this machine lets us have a network namespace of our own (with lo up). */
static int probe_net(void) {
  if (geteuid() == 0) CHECK(unshare(CLONE_NEWNET), "unshare: %s", strerror(errno));
  else become_namespace_root(CLONE_NEWNET);
  loopback_up();
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "holder") == 0) return holder(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "run") == 0) return run();
  if (argc >= 2 && strcmp(argv[1], "probe-net") == 0) return probe_net();
  if (argc >= 4 && argc % 2 == 0 && strcmp(argv[1], "mount") == 0) return host_mount(argc, argv);
  if (argc >= 3 && strcmp(argv[1], "unmount") == 0) return host_unmount(argc, argv);
  fprintf(stderr, "usage: forkpoint-sandbox holder [--persist PIDFILE] | run (request on fd 3) | mount OPTIONS TARGET ... | unmount TARGET ... | probe-net\n");
  return 2;
}
