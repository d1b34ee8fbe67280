/*
 * Egress through forkpoint's effects proxy (docs/effects.md, "What is intercepted"): a
 * sandbox whose network namespace has no way out but one port on its own loopback, where
 * every TCP connection and DNS query lands; a relay outside the sandbox hands each
 * connection to the proxy's unix socket, naming where it was going.
 */
#ifndef FORKPOINT_EGRESS_H
#define FORKPOINT_EGRESS_H

#include <stddef.h>

/* The listeners, in this order; an entry is -1 where the namespace has no IPv6. */
enum { EGRESS_TCP4, EGRESS_TCP6, EGRESS_UDP4, EGRESS_UDP6, EGRESS_LISTENERS };

/*
 * In the sandbox's network namespace, as its root, loopback up: default routes into
 * loopback and NAT rules sending every TCP connection and every DNS query to the egress
 * port, then the listeners on it. 0, or -1 with the reason in `why`.
 */
int egress_prepare(int fds[EGRESS_LISTENERS], char *why, size_t size);

/* Hand the listeners over the unix socket `sock` / take them from it (-1 in each on failure). */
int egress_send(int sock, const int fds[EGRESS_LISTENERS]);
void egress_receive(int sock, int fds[EGRESS_LISTENERS]);

/*
 * Outside the sandbox, until the runtime is gone (`alive` becomes readable: the runtime held its
 * pipe's other end): each accepted connection goes to the unix
 * socket `proxy`, after one line `forkpoint-egress TOKEN ADDRESS PORT\n` naming the run's
 * `token` (the proxy's proof that the relay is speaking) and the connection's original
 * destination; each DNS query for an IPv4 address gets EGRESS_DNS_ANSWER (the proxy
 * connects by the name a request carries, its Host or TLS server name), other queries an
 * empty answer.
 */
void egress_relay(const int fds[EGRESS_LISTENERS], const char *proxy, const char *token, int alive) __attribute__((noreturn));

#endif
