import { type RunCommandOptions, runCommand } from '../branch/run/runCommand.js'
import { shellInBranch } from '../branch/run/shellInBranch.js'
import type { RunResult } from '../branch/run/runInBranch.js'
import { Workspace } from '../branch/Workspace.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { type EffectsContext, WORKSPACE_CONTEXT } from './contextLedger.js'
import { loadHttpPolicy } from './httpPolicy.js'
import { refusedWarning } from '../sandbox/egressServer.js'
import type { EgressProxy, NetMode } from '../sandbox/runSandboxed.js'
import { withEgressEffects, withHttpEffects, withPolicyEffects } from './withHttpEffects.js'
import { effectsLive } from './effectsProxy.js'
import { type RecordCommandArgs, type RecordResult, recordCommand } from '../trace/record/recordCommand.js'

/** The caller's environment, passed down from its edge: where FORKPOINT_KEY is read from for the outbox's ledger (the command's own environment is the allowlist, or `env`). */
interface CallerEnv {
  callerEnv: NodeJS.ProcessEnv
}

/**
 * `forkpoint run` (sandboxed) with the store's HTTP effects policy in force: with network
 * (`net: 'host'`), the sandbox gets a network of its own whose only way out is the egress
 * proxy, so inside a branch its irreversible requests wait in the branch's outbox, whatever
 * the program; what is neither HTTP nor TLS is refused (said in `warnings`). Without network
 * there is nothing to class; a policy file is still checked, so a malformed one fails before
 * the agent starts.
 * @throws {EffectsPolicyError} (exit 2) a malformed `.forkpoint/effects.json`
 */
export async function runWithEffects(args: StoreLocator & RunCommandOptions & CallerEnv): Promise<RunResult> {
  return withSandboxEffects(args, args.branch ?? null, (net) => runCommand({ ...args, ...(net ? { net } : {}) }))
}

/**
 * `forkpoint shell NAME` with the store's HTTP effects policy in force, as `runWithEffects`:
 * with network, the shell's only way out is the egress proxy of the branch's outbox.
 * @throws {EffectsPolicyError} (exit 2) a malformed `.forkpoint/effects.json`
 */
export async function shellWithEffects(args: Parameters<typeof shellInBranch>[0] & CallerEnv): Promise<{ exitCode: number; warnings: string[] }> {
  return withSandboxEffects(args, args.branch, (net) => shellInBranch({ ...args, ...(net ? { net } : {}) }))
}

/**
 * A sandboxed command in `branch` (null: the workspace) with the policy in force: with
 * network, `sandboxed` gets the egress to give it and its result the refused connections'
 * warnings; without, the policy is only checked.
 */
async function withSandboxEffects<T extends { warnings: string[] }>(
  args: StoreLocator & CallerEnv & { net?: NetMode | EgressProxy | undefined },
  branch: string | null,
  sandboxed: (net: EgressProxy | null) => Promise<T>,
): Promise<T> {
  const ws = await Workspace.open(args)
  if (args.net !== 'host') {
    await loadHttpPolicy(ws.store)
    return sandboxed(null)
  }
  const context: EffectsContext = branch ? { kind: 'branch', id: (await ws.openBranch(branch)).id, name: branch } : WORKSPACE_CONTEXT
  return withEgressEffects({ store: ws.store, context, env: args.callerEnv }, async (net, refused) => {
    const result = await sandboxed(net)
    return { ...result, warnings: [...result.warnings, ...refused.map(refusedWarning)] }
  })
}

/**
 * `forkpoint run --record` with the store's HTTP effects policy in force, in the workspace
 * (requests run at once, once per key for the classes that say so, answered from the ledger
 * after that): captured in-process or through the LLM proxy, the agent's HTTP goes through
 * the effects proxy (HTTP_PROXY); through the egress proxy, that proxy answers from the
 * effects themselves. The run records what the agent got.
 * @throws {EffectsPolicyError} (exit 2) a malformed `.forkpoint/effects.json`
 */
export async function recordWithEffects(args: RecordCommandArgs): Promise<RecordResult> {
  const { store } = await openStore(args)
  const { env } = args
  if (args.capture === 'egress') {
    return withPolicyEffects({ store, context: WORKSPACE_CONTEXT, env }, (effects) => recordCommand({ ...args, store, ...(effects ? { live: effectsLive(effects) } : {}) }))
  }
  return withHttpEffects({ store, context: WORKSPACE_CONTEXT, nodeHook: false, env }, (proxyEnv) =>
    recordCommand({ ...args, store, ...(proxyEnv ? { env: { ...env, ...proxyEnv } } : {}) }),
  )
}
