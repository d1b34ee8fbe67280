import type { Store } from '../store/Store.js'
import type { HttpRequestData, HttpResponseData } from '../trace/capture/httpExchange.js'
import { type EffectsContext, contextLedger, contextRef, saveContextLedger, withOutboxLock } from './contextLedger.js'
import { mergeLedgers } from './mergeLedgers.js'
import { readRef } from '../store/refs.js'
import type { Effects } from './Effects.js'
import { type HttpEffectArgs, type HttpEffectResult, deferredResponse, httpEffectArgs, httpResponseOf, httpToolName, sendHttpEffect } from './httpEffect.js'
import { type HttpPolicy, classifyRequest } from './httpPolicy.js'
import type { EffectClass } from '../objects/Ledger.js'
import { openEffects } from './openEffects.js'
import { type DeferredEffect, isDeferredEffect } from './types.js'

export interface OpenHttpEffectsArgs {
  store: Store
  context: EffectsContext
  policy: HttpPolicy
  /** Where FORKPOINT_KEY is read from. */
  env: NodeJS.ProcessEnv
}

/**
 * The effects of one context's HTTP requests, as the policy classes them. A branch is
 * speculative: its irreversible requests are deferred into its outbox and the agent gets
 * the placeholder response. Every call is saved to the context's ledger ref at once, so
 * the outbox outlives the agent and this process.
 */
export class HttpEffects {
  private saving: Promise<void> = Promise.resolve()

  private constructor(
    private readonly effects: Effects,
    private readonly args: OpenHttpEffectsArgs,
  ) {}

  static async open(args: OpenHttpEffectsArgs): Promise<HttpEffects> {
    const { store, context, env } = args
    const ledger = await contextLedger(store, context)
    const mode = context.kind === 'branch' ? 'speculative' : 'direct'
    return new HttpEffects(await openEffects({ store, env, mode, ...(ledger ? { ledger } : {}) }), args)
  }

  /** The policy in force. */
  get policy(): HttpPolicy {
    return this.args.policy
  }

  /** Handle a request the policy classes and return the agent's response; null when the policy leaves it alone (send it on as it is). */
  async handle(req: HttpRequestData): Promise<HttpResponseData | null> {
    const classed = classifyRequest(this.args.policy, req.method, req.url)
    if (!classed) return null
    const args = httpEffectArgs(req)
    const tool = httpTool(this.effects, httpToolName(args.method, args.url), classed.class)
    try {
      const result = await tool(args)
      return isDeferredEffect(result) ? deferredResponse(result, this.contextName()) : httpResponseOf(result)
    } finally {
      await this.save()
    }
  }

  /** Wait for the last save; then the ref holds every call handled so far. */
  async settled(): Promise<void> {
    await this.saving
  }

  private save(): Promise<void> {
    const { store, context, env } = this.args
    this.saving = this.saving.then(async () => {
      const mine = await this.effects.ledger()
      if (context.kind === 'branch') return saveContextLedger(store, context, mine, 'effects: http request')
      // the workspace's ledger also takes commits' outboxes and their sends meanwhile: merged, under their lock, never overwritten
      await withOutboxLock(store, async () => {
        const current = await readRef(store, contextRef(context))
        const merged = current && current !== mine ? (await mergeLedgers({ store, ours: current, theirs: mine, env })).digest : mine
        await saveContextLedger(store, context, merged, 'effects: http request')
      })
    })
    return this.saving
  }

  private contextName(): string {
    const { context } = this.args
    return context.kind === 'workspace' ? 'the workspace' : `branch ${context.name ?? context.id}`
  }
}

/** Register the `http …` tool of one method, host and path on a handle: it sends the request, with its key, when it runs. */
export function httpTool(effects: Effects, name: string, effectClass: EffectClass): (args: HttpEffectArgs) => Promise<HttpEffectResult | DeferredEffect> {
  return effects.tool(name, sendHttpEffect, { class: effectClass, key: (args) => args.idempotencyKey })
}
