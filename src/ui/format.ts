/** The short form of a digest, as the CLI prints it. */
export const short = (id: string): string => id.replace(/^sha256:/, '').slice(0, 12)

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '?'
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = n / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}

/** A recorded value as indented JSON text (shown as text, never as markup). */
export const json = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value, null, 2))

export const when = (iso: string): string => iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')

export const ms = (n: number): string => (n < 1000 ? `${n.toFixed(n < 10 ? 1 : 0)} ms` : `${(n / 1000).toFixed(1)} s`)
