import { constants } from 'node:os'
import { requirePackage } from '../util/requirePackage.js'
import type { Command, OptionValues } from 'commander'

/**
 * bin/forkpoint starts Node without NODE_EXTRA_CA_CERTS (Node 20 parses the whole bundle
 * while it starts, tens of milliseconds, though most commands open no TLS connection)
 * and passes it on under this name.
 */
const DEFERRED = 'FORKPOINT_DEFERRED_CA_CERTS'

/** This process started without the user's extra CA certificates, in this directory. */
let deferred: { cwd: string } | null = null

/**
 * Put NODE_EXTRA_CA_CERTS back where bin/forkpoint took it from, so that every process the
 * CLI starts (agents, sandboxed commands, helpers) sees the environment the user set.
 */
export function restoreExtraCaCerts(): void {
  const certs = process.env[DEFERRED]
  if (certs === undefined) return
  delete process.env[DEFERRED]
  process.env['NODE_EXTRA_CA_CERTS'] = certs
  deferred = { cwd: process.cwd() }
}

/** Thrown before a command that needs the certificates has done anything; `main` then restarts the command line. */
export class RestartWithExtraCaCerts extends Error {
  constructor() {
    super('this command needs NODE_EXTRA_CA_CERTS loaded at start-up')
  }
}

/**
 * A `preAction` hook for commands that open HTTPS connections from this process
 * (registries, the recording proxy): they run in a Node that loaded the certificates.
 */
export function needsExtraCaCerts(): void {
  if (deferred) throw new RestartWithExtraCaCerts()
}

/** `needsExtraCaCerts` for commands that open HTTPS connections only with some options. */
export function needsExtraCaCertsWhen<Flags>(when: (flags: Flags) => unknown): (cmd: Command) => void {
  return (cmd) => {
    if (when(cmd.opts<Flags & OptionValues>())) needsExtraCaCerts()
  }
}

/**
 * Run this process's command line again, from the directory it started in, in a Node
 * that loads NODE_EXTRA_CA_CERTS (restored in the environment it inherits); resolves
 * with the exit status to leave with. SIGTERM and SIGHUP, sent to this process, are
 * passed on; SIGINT and SIGQUIT are ignored while the command runs, as system(3) does:
 * the terminal sends them to the whole process group, the command included.
 */
export function rerunWithExtraCaCerts(): Promise<number> {
  const { spawn } = requirePackage('node:child_process') as typeof import('node:child_process')
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { cwd: deferred?.cwd, stdio: 'inherit' })
  const forward = (signal: NodeJS.Signals) => child.kill(signal)
  const ignore = () => undefined
  const handlers = [...(['SIGTERM', 'SIGHUP'] as const).map((s) => [s, forward] as const), ...(['SIGINT', 'SIGQUIT'] as const).map((s) => [s, ignore] as const)]
  for (const [signal, handler] of handlers) process.on(signal, handler)
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code, signal) => {
      for (const [s, handler] of handlers) process.off(s, handler)
      resolve(code ?? 128 + (signal ? constants.signals[signal] : 0))
    })
  })
}
