import { type RunCommandOptions, runCommand } from '../branch/runCommand.js'
import type { RunResult } from '../branch/runInBranch.js'
import { Workspace } from '../branch/Workspace.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { type EffectsContext, WORKSPACE_CONTEXT } from './contextLedger.js'
import { loadHttpPolicy } from './httpPolicy.js'
import { withHttpEffects } from './withHttpEffects.js'
import { type RecordCommandArgs, type RecordResult, recordCommand } from '../trace/record/recordCommand.js'

/**
 * `forkpoint run` (sandboxed) with the store's HTTP effects policy in force: with the
 * host's network (`net: 'host'`), the agent's HTTP goes through the effects proxy (the
 * standard proxy variables), so inside a branch its irreversible requests wait in the
 * branch's outbox. Without network there is nothing to class; a policy file is still
 * checked, so a malformed one fails before the agent starts.
 * @throws {EffectsPolicyError} (exit 2) a malformed `.forkpoint/effects.json`
 */
export async function runWithEffects(args: StoreLocator & RunCommandOptions): Promise<RunResult> {
  const ws = await Workspace.open(args)
  if (args.net !== 'host') {
    await loadHttpPolicy(ws.store)
    return runCommand(args)
  }
  const context: EffectsContext = args.branch ? { kind: 'branch', id: (await ws.openBranch(args.branch)).id, name: args.branch } : WORKSPACE_CONTEXT
  // a sandbox shows the agent none of forkpoint's files: the standard proxy variables only, no Node hook
  return withHttpEffects({ store: ws.store, context, nodeHook: false }, (proxyEnv) => runCommand({ ...args, ...(proxyEnv ? { extraEnv: { ...args.extraEnv, ...proxyEnv } } : {}) }))
}

/**
 * `forkpoint run --record` with the store's HTTP effects policy in force, in the workspace
 * (requests run at once, once per key for the classes that say so, answered from the ledger
 * after that): Node agents' captured calls and other languages' proxied ones (HTTP_PROXY)
 * go through the effects proxy; the run records what the agent got.
 * @throws {EffectsPolicyError} (exit 2) a malformed `.forkpoint/effects.json`
 */
export async function recordWithEffects(args: RecordCommandArgs): Promise<RecordResult> {
  const { store } = await openStore(args)
  const env = args.env ?? process.env
  return withHttpEffects({ store, context: WORKSPACE_CONTEXT, nodeHook: false, env }, (proxyEnv) =>
    recordCommand({ ...args, store, ...(proxyEnv ? { env: { ...env, ...proxyEnv } } : {}) }),
  )
}
