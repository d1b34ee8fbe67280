import { UsageError } from '../errors/index.js'

/** A flag's value as a whole number of at least `min`, or a UsageError that names `command` and the flag. */
export function wholeNumber(command: string, flag: string, value: string, min = 0): number {
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < min)
    throw new UsageError(`${command}: ${flag} must be a whole number${min > 0 ? ` of at least ${min}` : ''}, not ${JSON.stringify(value)}`, { option: flag, value })
  return n
}
