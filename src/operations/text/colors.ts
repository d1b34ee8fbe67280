import { createColors } from 'picocolors'

export type Colors = ReturnType<typeof createColors>

/**
 * The text renderings' colours. Plain until the edge that prints turns them on for its terminal
 * (`useColors`), so a rendering handed to a service, a test or a pipe carries no escape codes.
 */
export const pc: Colors = createColors(false)

export function useColors(enabled: boolean): void {
  Object.assign(pc, createColors(enabled))
}

/** Colour for a stream that wants it: NO_COLOR turns it off, FORCE_COLOR on, else a terminal that is not "dumb". */
export function colorsWanted(env: NodeJS.ProcessEnv, stream: { isTTY?: boolean }): boolean {
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false
  if (env['FORCE_COLOR'] !== undefined) return env['FORCE_COLOR'] !== '0' && env['FORCE_COLOR'] !== 'false'
  return stream.isTTY === true && env['TERM'] !== 'dumb'
}
