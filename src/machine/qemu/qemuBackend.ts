import { openStore } from '../../store/findStore.js'
import type { MachineBackend, MachineRef } from '../MachineBackend.js'
import { listRecords, readRecord } from '../machineRecords.js'
import { bootQemu } from './bootQemu.js'
import { forkQemu } from './forkQemu.js'
import { info, killRecord, machineMemory, withRunningAgent } from './qemuProcess.js'
import { snapshotQemu } from './snapshotQemu.js'

/** Machines as QEMU microVMs (docs/machine.md). */
export const qemuBackend: MachineBackend = {
  name: 'qemu',
  boot: bootQemu,
  exec: (o) => withRunningAgent(o, (run) => run(o.command)),
  snapshot: snapshotQemu,
  restore: async (o) => (await forkQemu({ ...o, n: 1 }))[0]!,
  fork: forkQemu,
  kill: async (o: MachineRef) => {
    const { store } = await openStore(o)
    await killRecord(store, readRecord(store, o.machine).id)
  },
  stats: machineMemory,
  list: async (o) => listRecords((await openStore(o)).store).map(info),
}
