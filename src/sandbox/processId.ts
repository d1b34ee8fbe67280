import { readFileSync } from 'node:fs'

/** A process, told apart from a later one that reuses its pid by its start time. */
export interface ProcessId {
  pid: number
  start: string
}

/** The start time of a process (field 22 of /proc/PID/stat), or null when it is gone. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null
  } catch {
    return null
  }
}

export function processId(pid: number): ProcessId {
  return { pid, start: startTime(pid) ?? '?' }
}

/** True while that very process (not a later one with the same pid) runs and is not a zombie. */
export function isAlive(id: ProcessId): boolean {
  try {
    const stat = readFileSync(`/proc/${id.pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return fields[0] !== 'Z' && fields[19] === id.start
  } catch {
    return false
  }
}

export const self: ProcessId = processId(process.pid)
