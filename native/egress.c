/* Egress through forkpoint's effects proxy: see egress.h. */
#define _GNU_SOURCE
#include "egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* The port on the sandbox's loopback where everything lands (tcpmux: nothing uses it). */
#define EGRESS_PORT 1
#define TEXT(x) #x
#define PORT_TEXT(x) TEXT(x)
/* What a DNS query for an IPv4 address gets: an address of the benchmarking range (RFC 2544). */
#define EGRESS_DNS_ANSWER "198.18.0.1"
/* Connections relayed at once: each is a process outside the sandbox, so its pids limit does not count them. */
#define EGRESS_CONNECTIONS 128
#ifndef IP6T_SO_ORIGINAL_DST
#define IP6T_SO_ORIGINAL_DST 80
#endif

/* ---------- routes ---------- */

/* Append an attribute to the netlink message at `msg`, a buffer of `size` bytes; -1 when it would not fit. */
static int add_attribute(void *msg, size_t size, unsigned short type, const void *data, size_t len) {
  struct nlmsghdr *n = msg;
  if (NLMSG_ALIGN(n->nlmsg_len) + RTA_SPACE(len) > size) return -1;
  struct rtattr *a = (struct rtattr *)((char *)msg + NLMSG_ALIGN(n->nlmsg_len));
  a->rta_type = type;
  a->rta_len = (unsigned short)RTA_LENGTH(len);
  memcpy(RTA_DATA(a), data, len);
  n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(a->rta_len);
  return 0;
}

/*
 * A default route of `family` out of loopback, from loopback's address (no other address
 * exists to answer to), so that a connection anywhere reaches the NAT rules.
 */
static int default_route(int family) {
  int sock = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (sock < 0) return -1;
  struct {
    struct nlmsghdr n;
    struct rtmsg r;
    char attrs[64];
  } req = {0};
  req.n.nlmsg_len = NLMSG_LENGTH(sizeof req.r);
  req.n.nlmsg_type = RTM_NEWROUTE;
  req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
  req.r.rtm_family = (unsigned char)family;
  req.r.rtm_table = RT_TABLE_MAIN;
  req.r.rtm_protocol = RTPROT_BOOT;
  req.r.rtm_scope = family == AF_INET ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
  req.r.rtm_type = RTN_UNICAST;
  int lo = (int)if_nametoindex("lo");
  struct in_addr loopback4 = {htonl(INADDR_LOOPBACK)};
  int added = add_attribute(&req, sizeof req, RTA_OIF, &lo, sizeof lo) == 0 &&
              (family == AF_INET ? add_attribute(&req, sizeof req, RTA_PREFSRC, &loopback4, sizeof loopback4)
                                 : add_attribute(&req, sizeof req, RTA_PREFSRC, &in6addr_loopback, sizeof in6addr_loopback)) == 0;
  if (!added) {
    close(sock);
    return -1;
  }
  char answer[512];
  int status = -1;
  if (send(sock, &req, req.n.nlmsg_len, 0) == (ssize_t)req.n.nlmsg_len) {
    ssize_t n = recv(sock, answer, sizeof answer, 0);
    struct nlmsghdr *h = (struct nlmsghdr *)answer;
    if (n >= (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)) && h->nlmsg_type == NLMSG_ERROR) {
      int error = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
      status = error == 0 ? 0 : (errno = -error, -1);
    }
  }
  close(sock);
  return status;
}

/* ---------- NAT rules ---------- */

static const char RULES[] = "*nat\n"
                            ":OUTPUT ACCEPT [0:0]\n"
                            "-A OUTPUT -p tcp -j REDIRECT --to-ports " PORT_TEXT(EGRESS_PORT) "\n"
                            "-A OUTPUT -p udp --dport 53 -j REDIRECT --to-ports " PORT_TEXT(EGRESS_PORT) "\n"
                            "COMMIT\n";

/* `NAME-restore` fed RULES on stdin, from the first directory that has it. 0 when it took them. */
static int restore_rules(const char *name) {
  static const char *dirs[] = {"/usr/sbin", "/sbin", "/usr/bin", "/bin", NULL};
  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) return -1;
  pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    dup2(in[0], 0);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, 1), dup2(null, 2);
    char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    for (const char **d = dirs; *d; d++) {
      char path[256];
      snprintf(path, sizeof path, "%s/%s", *d, name);
      char *const argv[] = {path, "--noflush", NULL};
      execve(path, argv, envp);
    }
    _exit(127);
  }
  close(in[0]);
  ssize_t wrote = write(in[1], RULES, sizeof RULES - 1);
  close(in[1]);
  int status;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return wrote == (ssize_t)(sizeof RULES - 1) && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int nat_rules(int family) {
  const char *nft = family == AF_INET ? "iptables-nft-restore" : "ip6tables-nft-restore";
  const char *plain = family == AF_INET ? "iptables-restore" : "ip6tables-restore";
  return restore_rules(nft) == 0 || restore_rules(plain) == 0 ? 0 : -1;
}

/* ---------- listeners ---------- */

static int listener(int family, int type) {
  int sock = socket(family, type | SOCK_CLOEXEC, 0), one = 1;
  if (sock < 0) return -1;
  struct sockaddr_storage at = {0};
  socklen_t len;
  if (family == AF_INET) {
    struct sockaddr_in *in = (struct sockaddr_in *)&at;
    in->sin_family = AF_INET, in->sin_port = htons(EGRESS_PORT), in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof *in;
  } else {
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&at;
    in6->sin6_family = AF_INET6, in6->sin6_port = htons(EGRESS_PORT), in6->sin6_addr = in6addr_loopback;
    len = sizeof *in6;
    setsockopt(sock, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  }
  if (bind(sock, (struct sockaddr *)&at, len) != 0 || (type == SOCK_STREAM && listen(sock, 256) != 0)) {
    close(sock);
    return -1;
  }
  return sock;
}

int egress_prepare(int fds[EGRESS_LISTENERS], char *why, size_t size) {
  for (int i = 0; i < EGRESS_LISTENERS; i++) fds[i] = -1;
  if (default_route(AF_INET) != 0) return snprintf(why, size, "cannot route the sandbox's network into its loopback: %s", strerror(errno)), -1;
  if (nat_rules(AF_INET) != 0)
    return snprintf(why, size, "cannot redirect the sandbox's connections to the effects proxy (iptables-restore with NAT, from the iptables package, is needed)"), -1;
  fds[EGRESS_TCP4] = listener(AF_INET, SOCK_STREAM);
  fds[EGRESS_UDP4] = listener(AF_INET, SOCK_DGRAM);
  if (fds[EGRESS_TCP4] < 0 || fds[EGRESS_UDP4] < 0) return snprintf(why, size, "cannot listen on the sandbox's egress port: %s", strerror(errno)), -1;
  /* without IPv6 in the namespace no IPv6 connection can be made at all: nothing to redirect */
  int tcp6 = listener(AF_INET6, SOCK_STREAM);
  if (tcp6 < 0) return 0;
  if (default_route(AF_INET6) != 0 || nat_rules(AF_INET6) != 0)
    return close(tcp6), snprintf(why, size, "cannot redirect the sandbox's IPv6 connections to the effects proxy (ip6tables-restore with NAT is needed)"), -1;
  fds[EGRESS_TCP6] = tcp6;
  fds[EGRESS_UDP6] = listener(AF_INET6, SOCK_DGRAM);
  return 0;
}

/* ---------- handing the listeners out of the sandbox ---------- */

int egress_send(int sock, const int fds[EGRESS_LISTENERS]) {
  char present[EGRESS_LISTENERS];
  int sent[EGRESS_LISTENERS], n = 0;
  for (int i = 0; i < EGRESS_LISTENERS; i++) {
    present[i] = fds[i] >= 0;
    if (present[i]) sent[n++] = fds[i];
  }
  struct iovec iov = {.iov_base = present, .iov_len = sizeof present};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int) * EGRESS_LISTENERS)];
  } control = {0};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n)};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
  memcpy(CMSG_DATA(c), sent, sizeof(int) * (size_t)n);
  return sendmsg(sock, &msg, 0) == (ssize_t)sizeof present ? 0 : -1;
}

void egress_receive(int sock, int fds[EGRESS_LISTENERS]) {
  char present[EGRESS_LISTENERS];
  struct iovec iov = {.iov_base = present, .iov_len = sizeof present};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int) * EGRESS_LISTENERS)];
  } control;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
  for (int i = 0; i < EGRESS_LISTENERS; i++) fds[i] = -1;
  ssize_t got;
  while ((got = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) continue;
  struct cmsghdr *c = got == (ssize_t)sizeof present ? CMSG_FIRSTHDR(&msg) : NULL;
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return;
  int received[EGRESS_LISTENERS];
  size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
  memcpy(received, CMSG_DATA(c), sizeof(int) * count);
  for (size_t i = 0, next = 0; i < EGRESS_LISTENERS; i++)
    if (present[i] && next < count) fds[i] = received[next++];
}

/* ---------- the relay ---------- */

static int write_all(int fd, const char *buf, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    buf += w, n -= (size_t)w;
  }
  return 0;
}

/* The run's secret the proxy knows its relay by: a program that finds the proxy's socket cannot pass for the relay. */
static const char *relay_token;

/* `forkpoint-egress TOKEN ADDRESS PORT\n` for where `client` was going before the NAT rule turned it here. */
static int destination_line(int client, int family, char *line, size_t size) {
  struct sockaddr_storage dst;
  socklen_t len = sizeof dst;
  char address[INET6_ADDRSTRLEN];
  int port;
  if (family == AF_INET) {
    if (getsockopt(client, SOL_IP, SO_ORIGINAL_DST, &dst, &len) != 0) return -1;
    struct sockaddr_in *in = (struct sockaddr_in *)&dst;
    inet_ntop(AF_INET, &in->sin_addr, address, sizeof address), port = ntohs(in->sin_port);
  } else {
    if (getsockopt(client, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &dst, &len) != 0) return -1;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&dst;
    inet_ntop(AF_INET6, &in6->sin6_addr, address, sizeof address), port = ntohs(in6->sin6_port);
  }
  return snprintf(line, size, "forkpoint-egress %s %s %d\n", relay_token, address, port);
}

static int connect_proxy(const char *proxy) {
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un at = {.sun_family = AF_UNIX};
  snprintf(at.sun_path, sizeof at.sun_path, "%s", proxy);
  if (sock >= 0 && connect(sock, (struct sockaddr *)&at, sizeof at) == 0) return sock;
  if (sock >= 0) close(sock);
  return -1;
}

/*
 * Copy both ways until both sides have finished (a side's end is passed on as a half close)
 * or the runtime is gone (`alive` readable: its write end closed).
 */
static void splice_both(int a, int b, int alive) {
  struct pollfd fds[3] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}, {.fd = alive, .events = POLLIN}};
  char buf[65536];
  int open_sides = 2;
  while (open_sides > 0) {
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[2].revents) return;
    for (int i = 0; i < 2; i++) {
      if (!fds[i].revents) continue;
      int other = i == 0 ? b : a;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        shutdown(other, SHUT_WR);
        fds[i].fd = -1, open_sides--;
      } else if (write_all(other, buf, (size_t)n) != 0) {
        return;
      }
    }
  }
}

static void serve_connection(int client, int family, const char *proxy, int alive) {
  char line[256];
  int n = destination_line(client, family, line, sizeof line);
  int upstream = n > 0 && (size_t)n < sizeof line ? connect_proxy(proxy) : -1;
  if (upstream >= 0 && write_all(upstream, line, (size_t)n) == 0) splice_both(client, upstream, alive);
}

/* 1 when a handler now serves a new connection from `listening`. */
static int accept_connection(int listening, int family, const char *proxy, int alive) {
  int client = accept4(listening, NULL, NULL, SOCK_CLOEXEC);
  if (client < 0) return 0;
  pid_t handler = fork();
  if (handler == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    serve_connection(client, family, proxy, alive);
    _exit(0);
  }
  close(client);
  return handler > 0;
}

/* The answer to the DNS query in `q` (n bytes), in place; its length, or 0 to ignore the query. */
static size_t dns_answer(unsigned char *q, size_t n, size_t size) {
  if (n < 12 || (q[2] & 0x80) || q[4] != 0 || q[5] != 1) return 0;
  size_t at = 12;
  while (at < n && q[at] != 0) {
    if ((q[at] & 0xc0) != 0) return 0;
    at += (size_t)q[at] + 1;
  }
  if (at + 5 > n) return 0;
  unsigned type = (unsigned)(q[at + 1] << 8 | q[at + 2]), klass = (unsigned)(q[at + 3] << 8 | q[at + 4]);
  size_t end = at + 5;
  int address = type == 1 && klass == 1;
  if (end + (address ? 16 : 0) > size) return 0;
  q[2] = (unsigned char)(0x80 | (q[2] & 0x01)), q[3] = 0x80; /* an answer, recursion available, no error */
  q[6] = 0, q[7] = (unsigned char)address;                  /* answers */
  memset(q + 8, 0, 4);                                        /* no authority, no additional records */
  if (!address) return end;
  unsigned char record[16] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4};
  inet_pton(AF_INET, EGRESS_DNS_ANSWER, record + 12);
  memcpy(q + end, record, sizeof record);
  return end + sizeof record;
}

static void answer_dns(int sock) {
  unsigned char buf[1024];
  struct sockaddr_storage from;
  socklen_t len = sizeof from;
  ssize_t n = recvfrom(sock, buf, 512, 0, (struct sockaddr *)&from, &len);
  if (n <= 0) return;
  size_t answer = dns_answer(buf, (size_t)n, sizeof buf);
  if (answer > 0) sendto(sock, buf, answer, 0, (struct sockaddr *)&from, len);
}

static void on_child(int sig) { (void)sig; }

/*
 * At most EGRESS_CONNECTIONS handlers at once: past that, new connections wait in the
 * listeners' backlog (and then the kernel's) until one ends.
 */
void egress_relay(const int fds[EGRESS_LISTENERS], const char *proxy, const char *token, int alive) {
  relay_token = token;
  struct sigaction child = {.sa_handler = on_child, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGCHLD, &child, NULL); /* wakes ppoll when a handler ends: blocked but there */
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld, waiting;
  sigemptyset(&chld), sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &waiting);
  sigdelset(&waiting, SIGCHLD);
  struct pollfd polled[EGRESS_LISTENERS + 1];
  int live = 0;
  for (;;) {
    while (live > 0 && waitpid(-1, NULL, WNOHANG) > 0) live--;
    for (int i = 0; i < EGRESS_LISTENERS; i++) {
      int tcp = i == EGRESS_TCP4 || i == EGRESS_TCP6;
      polled[i] = (struct pollfd){.fd = tcp && live >= EGRESS_CONNECTIONS ? -1 : fds[i], .events = POLLIN};
    }
    polled[EGRESS_LISTENERS] = (struct pollfd){.fd = alive, .events = POLLIN};
    if (ppoll(polled, EGRESS_LISTENERS + 1, NULL, &waiting) < 0) {
      if (errno == EINTR) continue;
      _exit(1);
    }
    if (polled[EGRESS_LISTENERS].revents) {
      kill(0, SIGKILL); /* the runtime is gone: so are this relay and its handlers (their own process group) */
      _exit(0);
    }
    if (polled[EGRESS_TCP4].revents) live += accept_connection(fds[EGRESS_TCP4], AF_INET, proxy, alive);
    if (polled[EGRESS_TCP6].revents) live += accept_connection(fds[EGRESS_TCP6], AF_INET6, proxy, alive);
    if (polled[EGRESS_UDP4].revents) answer_dns(fds[EGRESS_UDP4]);
    if (polled[EGRESS_UDP6].revents) answer_dns(fds[EGRESS_UDP6]);
  }
}
