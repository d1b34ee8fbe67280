import { type Command, Option } from 'commander'
import { resolve } from 'node:path'

/** Where a command works: the workspace directory and, when given, the store. */
export interface Where {
  dir: string
  store?: string
}

/** Options every command understands, wherever they are written on the line. */
export interface CommonFlags extends Where {
  json: boolean
}

/** Add the common options to a command (so `forkpoint log --json` and `forkpoint --json log` both work). */
export function common(cmd: Command): Command {
  return cmd
    .addOption(new Option('--json', 'machine-readable output on stdout'))
    .addOption(new Option('--store <dir>', 'store directory (default: nearest .forkpoint/, or $FORKPOINT_STORE)'))
    .addOption(new Option('-C, --dir <dir>', 'workspace directory to run in'))
}

/** Merge a command's own flags with the program's global ones (`-C DIR` has already made DIR the current directory). */
export function commonFlags(cmd: Command): CommonFlags {
  const all = cmd.optsWithGlobals<{ json?: boolean; store?: string }>()
  const flags: CommonFlags = { json: Boolean(all.json), dir: process.cwd() }
  const store = all.store ?? process.env['FORKPOINT_STORE']
  if (store) flags.store = resolve(store)
  return flags
}
