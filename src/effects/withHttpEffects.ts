import type { Store } from '../store/Store.js'
import type { EffectsContext } from './contextLedger.js'
import { effectsLive, startEffectsProxy } from './effectsProxy.js'
import { HttpEffects } from './HttpEffects.js'
import { startEgressServer } from '../sandbox/egressServer.js'
import type { EgressProxy } from '../sandbox/runSandboxed.js'
import { storeCa } from '../sandbox/storeCa.js'
import { answerFrom } from '../trace/capture/liveAnswer.js'
import { type HttpPolicy, loadHttpPolicy } from './httpPolicy.js'

export interface WithHttpEffectsArgs {
  store: Store
  /** The workspace (requests run at once) or a branch (irreversible ones wait in its outbox). */
  context: EffectsContext
  /** Whether the agent can load the Node hook (it sees forkpoint's files: not in a sandbox). @default true */
  nodeHook?: boolean
  /** The agent's environment the proxy's variables are added to, and where FORKPOINT_KEY is read from: the caller's, passed down from its edge. */
  env: NodeJS.ProcessEnv
  /** The policy in force instead of the store's file (null: none); a fan-out worker runs under the submitter's. */
  policy?: HttpPolicy | null
}

/**
 * Run `work` with the store's HTTP effects policy in force for one context: the effects
 * that class its requests, or null without a policy file; they are settled after `work`.
 * @throws {EffectsPolicyError} (exit 2) the policy file is malformed; `work` does not run
 */
export async function withPolicyEffects<T>({ store, context, env, ...args }: Omit<WithHttpEffectsArgs, 'nodeHook'>, work: (effects: HttpEffects | null) => Promise<T>): Promise<T> {
  const policy = args.policy !== undefined ? args.policy : await loadHttpPolicy(store)
  if (!policy) return work(null)
  const effects = await HttpEffects.open({ store, context, policy, env })
  try {
    return await work(effects)
  } finally {
    await effects.settled()
  }
}

/**
 * Run `work` with the store's HTTP effects policy in force for one context: an effects
 * proxy on 127.0.0.1, whose variables `work` gives the agent. Without a policy file,
 * `work` gets null and nothing is started.
 * @throws {EffectsPolicyError} (exit 2) the policy file is malformed; `work` does not run
 */
export async function withHttpEffects<T>({ nodeHook = true, ...args }: WithHttpEffectsArgs, work: (proxyEnv: Record<string, string> | null) => Promise<T>): Promise<T> {
  return withPolicyEffects(args, async (effects) => {
    if (!effects) return work(null)
    const proxy = await startEffectsProxy({ effects, policy: effects.policy, nodeHook, env: args.env })
    try {
      return await work(proxy.env)
    } finally {
      await proxy.close()
    }
  })
}

/**
 * Run a sandboxed `work` with the store's HTTP effects policy in force for one context,
 * failing closed: `work` gets the network to give the sandbox (`runSandboxed`'s `net`), a
 * namespace of its own whose every TCP connection and DNS query reach the egress proxy,
 * whatever the program's language or HTTP client. Without a policy file, `work` gets null.
 * `refused` lists connections refused for being neither HTTP nor TLS.
 * @throws {EffectsPolicyError} (exit 2) the policy file is malformed; `work` does not run
 */
export async function withEgressEffects<T>(args: Omit<WithHttpEffectsArgs, 'nodeHook'>, work: (net: EgressProxy | null, refused: readonly string[]) => Promise<T>): Promise<T> {
  return withPolicyEffects(args, async (effects) => {
    if (!effects) return work(null, [])
    const egress = await startEgressServer({ answer: answerFrom(effectsLive(effects)), ca: await storeCa(args.store) })
    try {
      return await work(egress.net, egress.refused)
    } finally {
      await egress.close()
    }
  })
}
