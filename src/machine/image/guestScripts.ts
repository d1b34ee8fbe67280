/** Modules the busybox guest loads, in this order once their dependencies are sorted in (the cloud kernel builds virtio as modules). */
export const GUEST_MODULES = ['virtio_mmio', 'virtio_blk', 'virtio_console', 'virtio-rng', 'virtio_net'] as const

/**
 * A shell on the serial console (`machine console`), its controlling terminal, started
 * again when it exits: it waits on a read, so an idle one costs nothing.
 */
const CONSOLE_SHELL = (busybox: string) => `while :; do ${busybox}setsid -c ${busybox}sh -l </dev/ttyS0 >/dev/ttyS0 2>&1; ${busybox}sleep 0.1; done &
`

/**
 * The guest's network, when it has a device (`--net egress`): QEMU's user-mode network's
 * addresses, set statically (a DHCP client would cost every boot a round of requests).
 */
const GUEST_NET = (ip: string) => `${ip} link set lo up
[ -e /sys/class/net/eth0 ] && ${ip} link set eth0 up && ${ip} addr add 10.0.2.15/24 dev eth0 && ${ip} route add default via 10.0.2.2
`

/** What an initramfs's PID 1 does first: the kernel's filesystems mounted, the modules loaded. */
function initPreamble(modules: readonly string[]): string {
  return `#!/bin/sh
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in ${modules.join(' ')}; do insmod /lib/modules/$m.ko; done
`
}

/** PID 1 of the busybox guest: mounts, modules, the disk at /data, then the agent, kept running. */
export function initScript(modules: readonly string[]): string {
  return `${initPreamble(modules)}mkdir -p /dev/pts /tmp /data && mount -t tmpfs tmpfs /tmp
[ -b /dev/vda ] && mount -t ext4 -o noatime /dev/vda /data
${GUEST_NET('ip')}echo "forkpoint guest ready $(cut -d' ' -f1 /proc/uptime)" > /dev/ttyS0
while :; do /bin/agent; sleep 0.1; done &
${CONSOLE_SHELL('')}while :; do sleep 3600; done
`
}

/**
 * The guest agent, on the first virtio-serial port (a port, not the serial console: the
 * console carries the kernel's messages, and under TCG the emulated UART costs an exit a
 * byte). A request is one line, `<id> <script>`, the script's spaces, controls,
 * backslashes and non-ASCII bytes written `\0ooo` for the printf builtin to decode; the answer one line, `@@R <id>
 * <exit code> <stdout in base64 or -> <stderr in base64 or ->`; `@@HELLO` once it listens
 * after a boot. The port stays open: while no host is connected a read returns EOF at
 * once, and a write blocks until one connects, so on EOF the agent writes `@@READY` (the
 * host ignores it) and so waits, using no CPU, for the next host. Closing and reopening
 * the port instead lost a request sent while it was closed (the guest's driver drops
 * data for a closed port), and polled. Under TCG every process the guest starts costs
 * milliseconds (a fork's first command, most: its code is translated anew), so the
 * request is decoded by a builtin (base64 -d took a fifth of a fork's CPU), a script runs
 * in a subshell (a fork, no exec), and empty output is not encoded.
 */
export const AGENT_SCRIPT = `#!/bin/sh
P=
while [ -z "$P" ]; do for p in /dev/vport*p1; do [ -c "$p" ] && P=$p; done; [ -z "$P" ] && sleep 0.05; done
exec 3<>"$P"
echo "@@HELLO $(cut -d' ' -f1 /proc/uptime)" >&3
W=/tmp/.agent; mkdir -p $W
while :; do
  if ! IFS=' ' read -r id req <&3; then echo @@READY >&3; continue; fi
  [ -z "$id" ] && continue
  printf %b "$req" > $W/cmd
  (unset P W p id req; . /tmp/.agent/cmd) 3>&- </dev/null >$W/out 2>$W/err; rc=$?
  o=-; e=-
  [ -s $W/out ] && o=$(base64 -w 0 $W/out)
  [ -s $W/err ] && e=$(base64 -w 0 $W/err)
  echo "@@R $id $rc $o $e" >&3
done
`

/** The disk holding a root filesystem: the machine's one disk. */
const ROOT_DISK = '/dev/vda'

/** PID 1 of the initramfs of an image with a root filesystem: modules, then the disk mounted and made the root, its /sbin/forkpoint-init run. */
export function switchRootInit(modules: readonly string[]): string {
  return `${initPreamble(modules)}mkdir -p /newroot
n=0; while [ ! -b ${ROOT_DISK} ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
if ! mount -t ext4 -o noatime ${ROOT_DISK} /newroot; then echo "forkpoint: no root filesystem on ${ROOT_DISK}" > /dev/ttyS0; poweroff -f; fi
for d in dev proc sys; do mount --move /$d /newroot/$d; done
exec switch_root /newroot /sbin/forkpoint-init
`
}

/**
 * PID 1 of a root filesystem image: mounts, the filesystem grown to the disk (the disk
 * can be larger than the image's filesystem), then qemu-guest-agent on the virtio-serial
 * port (there is no udev to name it), kept running, and the recipe's own services
 * (`/usr/sbin/forkpoint-services`, where the image has one: the browser recipe's Chromium).
 * Busybox does what init needs, so the packages stay the recipe's own.
 */
export const ROOTFS_INIT = `#!/bin/busybox sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
busybox mount -t tmpfs -o mode=1777 tmpfs /tmp
busybox mount -t tmpfs -o mode=755 tmpfs /run
busybox mkdir -p /dev/pts /dev/shm /run/qemu-ga
busybox mount -t devpts devpts /dev/pts
busybox hostname forkpoint
${GUEST_NET('busybox ip')}resize2fs ${ROOT_DISK} >/dev/null 2>&1
P=
while [ -z "$P" ]; do for p in /dev/vport*p1; do [ -c "$p" ] && P=$p; done; [ -z "$P" ] && busybox sleep 0.05; done
echo "forkpoint guest ready $(busybox cut -d' ' -f1 /proc/uptime)" > /dev/ttyS0
while :; do qemu-ga -m virtio-serial -p "$P" -t /run/qemu-ga; busybox sleep 0.1; done </dev/null >/dev/null 2>&1 &
[ -x /usr/sbin/forkpoint-services ] && /usr/sbin/forkpoint-services </dev/null >/dev/null 2>&1 &
${CONSOLE_SHELL('busybox ')}while :; do busybox sleep 3600; done
`
