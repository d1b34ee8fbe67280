import { dirname, join } from 'node:path'
import type { Accelerator } from '../../objects/MachineLayer.js'
import { PUBLISH_ADDRESS } from '../net/machineNet.js'
import { type QemuUser, qemuUser } from './qemuUser.js'

/** What one QEMU process of ours is started with. */
export interface QemuLaunch {
  /**
   * The kernel, initramfs and command line to boot; null to wait for a device state over
   * QMP (`-incoming defer`) instead. A child loads no kernel: QEMU keeps a loaded kernel
   * and initramfs in its own memory, 14 MB of PSS a child here, for nothing.
   */
  boot: { kernel: string; initrd: string; cmdline: string } | null
  memoryMiB: number
  /** The guest's RAM as a file: `share` for a machine of its own (its RAM can be snapshotted by copying the file), not for a child mapping a template copy-on-write. */
  ram: { path: string; share: boolean }
  /** A qcow2 file. */
  disk: string
  sockets: { qmp: string; agent: string }
  /** The guest's serial console's log, for a failed boot's report; the console itself is a socket beside QMP's (`consoleSocket`). */
  console: string
  accelerator: Accelerator
  /**
   * The guest's network device (virtio-net on QEMU's user-mode network), or none. `open`:
   * its way out is the machine's relay (`--net egress`), and QEMU forwards PUBLISH_ADDRESS:P
   * in its namespace to each of `guestPorts`; else it leads nowhere (`restrict=on`, in an
   * empty namespace): a child of a machine that had one, started with `--net none`, for a
   * device state loads only into the same devices.
   */
  nic?: Nic | null
  /**
   * A second virtio-serial port, `cdp`, on a socket beside QMP's (`cdpSocket`): the
   * browser recipe's guest relays Chromium's DevTools protocol over it (`machine cdp`).
   * A device state loads only into the same devices, so a child has it when its parent did.
   */
  cdp?: boolean
}

export interface Nic {
  open: boolean
  guestPorts: number[]
}

/**
 * The serial console's socket, in the machine's socket directory (`machine console`): QEMU
 * serves one client at a time, and logs everything the guest writes to the console's log
 * whether or not one is connected.
 */
export const consoleSocket = (qmp: string) => join(dirname(qmp), 'console.sock')

/** The socket of a browser machine's CDP port (`QemuLaunch.cdp`), in the machine's socket directory. */
export const cdpSocket = (qmp: string) => join(dirname(qmp), 'cdp.sock')

export const QEMU_BINARY = 'qemu-system-x86_64'

/**
 * A microvm: no firmware or option ROMs, the legacy timers the kernel needs under TCG, one
 * virtio-serial port for the agent (and one for CDP in a browser machine), virtio-rng, the disk on virtio-blk, a network device
 * only when the machine has one, QMP on a unix socket, QEMU's seccomp sandbox on.
 */
export function qemuArgs(l: QemuLaunch): string[] {
  return [
    ...['-M', 'microvm,x-option-roms=off,rtc=on,pit=on,pic=on,isa-serial=on,memory-backend=mem'],
    ...['-accel', l.accelerator, '-cpu', l.accelerator === 'kvm' ? 'host' : 'max', '-m', `${l.memoryMiB}M`, '-smp', '1'],
    ...['-nodefaults', '-no-user-config', '-display', 'none', '-no-reboot'],
    ...['-object', `memory-backend-file,id=mem,size=${l.memoryMiB}M,mem-path=${opt(l.ram.path)},share=${l.ram.share ? 'on' : 'off'}`],
    ...(l.boot ? ['-kernel', l.boot.kernel, '-initrd', l.boot.initrd, '-append', l.boot.cmdline] : ['-incoming', 'defer']),
    ...['-chardev', `socket,id=con,path=${opt(consoleSocket(l.sockets.qmp))},server=on,wait=off,logfile=${opt(l.console)},logappend=on`, '-serial', 'chardev:con'],
    ...['-device', 'virtio-serial-device', '-chardev', `socket,id=agent,path=${opt(l.sockets.agent)},server=on,wait=off`, '-device', 'virtserialport,chardev=agent,name=agent'],
    ...(l.cdp ? ['-chardev', `socket,id=cdp,path=${opt(cdpSocket(l.sockets.qmp))},server=on,wait=off`, '-device', 'virtserialport,chardev=cdp,name=cdp'] : []),
    ...['-device', 'virtio-rng-device'],
    ...[
      ...DISK_FDS.flatMap((fd) => ['-add-fd', `fd=${fd},set=${DISK_FDSET}`]),
      '-drive',
      `file=/dev/fdset/${DISK_FDSET},file.locking=off,if=none,id=disk,format=qcow2,cache=unsafe,discard=unmap`,
    ],
    ...['-device', 'virtio-blk-device,drive=disk'],
    ...(l.nic ? nicArgs(l.nic) : []),
    ...['-qmp', `unix:${opt(l.sockets.qmp)},server=on,wait=off`],
    ...qemuContainment(qemuUser()),
  ]
}

/**
 * QEMU's user-mode network (slirp: the guest is 10.0.2.15, the host 10.0.2.2, no IPv6),
 * whose connections out are QEMU's own in its network namespace, where the machine's NAT
 * rules take them (launchQemu.ts).
 */
function nicArgs(nic: Nic): string[] {
  const forwards = nic.guestPorts.map((port) => `,hostfwd=tcp:${PUBLISH_ADDRESS}:${port}-:${port}`).join('')
  return ['-netdev', `user,id=net,ipv6=off,restrict=${nic.open ? 'off' : 'on'}${forwards}`, '-device', 'virtio-net-device,netdev=net']
}

/**
 * QEMU's own seccomp filter: obsolete system calls, spawning processes and changing
 * resource controls are denied, so a guest that exploits a device, or a hostile device
 * state, gets a QEMU that can do less (its state moves over unix sockets, never through a
 * program). Root's QEMU also becomes an unprivileged user of its own (`-runas`) once its
 * devices and files are open, before the guest runs or a state is loaded; its setuid
 * calls must then stay allowed for that one drop, after which it holds no capability
 * (and `no_new_privs`), so none can give any back. An unprivileged caller's QEMU never
 * changes user, and setuid and the like are denied.
 */
function qemuContainment(user: QemuUser | null): string[] {
  const sandbox = `on,obsolete=deny,spawn=deny,resourcecontrol=deny,elevateprivileges=${user ? 'allow' : 'deny'}`
  return [...(user ? ['-runas', `${user.uid}:${user.gid}`] : []), '-sandbox', sandbox]
}

/**
 * The disk reaches QEMU as two descriptors its launcher opened, read-write (3) and
 * read-only (4), in one fd set: QEMU reopens its disk by name when a migration hands it
 * over or takes it back, and root's QEMU has given up root by then, so it picks the
 * descriptor of the mode it needs from the set instead (as libvirt passes them).
 */
export const DISK_FDS = [3, 4] as const
const DISK_FDSET = 1

/** A path inside a QEMU option string: commas there are doubled. */
const opt = (path: string) => path.replaceAll(',', ',,')
