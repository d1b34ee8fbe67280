/** Modules the busybox guest loads, in this order once their dependencies are sorted in (the cloud kernel builds virtio as modules). */
export const GUEST_MODULES = ['virtio_mmio', 'virtio_blk', 'virtio_console', 'virtio-rng'] as const

/** PID 1 of the busybox guest: mounts, modules, the disk at /data, then the agent, kept running. */
export function initScript(modules: readonly string[]): string {
  return `#!/bin/sh
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /tmp /data && mount -t tmpfs tmpfs /tmp
for m in ${modules.join(' ')}; do insmod /lib/modules/$m.ko; done
[ -b /dev/vda ] && mount -t ext4 -o noatime /dev/vda /data
echo "forkpoint guest ready $(cut -d' ' -f1 /proc/uptime)" > /dev/ttyS0
while :; do /bin/agent; sleep 0.1; done &
while :; do sleep 3600; done
`
}

/**
 * The guest agent, on the first virtio-serial port (a port, not the serial console: the
 * console carries the kernel's messages, and under TCG the emulated UART costs an exit a
 * byte). A request is one line, `<id> <script in base64>`; the answer one line, `@@R <id>
 * <exit code> <stdout in base64 or -> <stderr in base64 or ->`; `@@HELLO` once it listens
 * after a boot. A port blocks writes
 * until the host connects and reads EOF when it goes, so the agent reopens it and waits:
 * a restored child's agent carries on with its new host.
 */
export const AGENT_SCRIPT = `#!/bin/sh
P=
while [ -z "$P" ]; do for p in /dev/vport*p1; do [ -c "$p" ] && P=$p; done; [ -z "$P" ] && sleep 0.05; done
exec 3<>"$P"
echo "@@HELLO $(cut -d' ' -f1 /proc/uptime)" >&3
W=/tmp/.agent; mkdir -p $W
while :; do
  if ! IFS=' ' read -r id b64 <&3; then exec 3<&-; sleep 0.05; exec 3<>"$P"; continue; fi
  [ -z "$id" ] && continue
  echo "$b64" | base64 -d > $W/cmd 2>/dev/null
  sh $W/cmd </dev/null >$W/out 2>$W/err; rc=$?
  o=$(base64 -w 0 $W/out); e=$(base64 -w 0 $W/err)
  echo "@@R $id $rc \${o:--} \${e:--}" >&3
done
`
