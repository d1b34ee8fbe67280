import type { Rendering } from '../../src/operations/rendering.js'
import { runOperation } from '../../src/operations/runOperation.js'
import { OPERATIONS, findOperation } from '../../src/operations/table.js'

/** An operation of the table as the command line runs it (no request policy), its arguments beside the locator. */
export async function callOperation<T = any>(name: string, { dir, store, ...args }: { dir?: string; store?: string; [arg: string]: unknown }): Promise<T> {
  const op = findOperation(OPERATIONS, name)
  if (!op) throw new Error(`no operation ${name}`)
  const where = { ...(dir === undefined ? {} : { dir }), ...(store === undefined ? {} : { store }) }
  const defined = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined))
  return (await runOperation(op, where, defined, { signal: new AbortController().signal, policy: null, env: process.env })) as T
}

/** How the command line renders an operation's result (its table form's rendering). */
export function renderingOf(name: string): Rendering<any, any> {
  const cli = findOperation(OPERATIONS, name)?.cli
  if (!cli || !('rendering' in cli)) throw new Error(`${name} has no rendering of the table's`)
  return cli.rendering as Rendering<any, any>
}
