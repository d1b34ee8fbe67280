import { HTTP_POLICY_FILE, loadHttpPolicy } from '../effects/httpPolicy.js'
import { UsageError } from '../errors/index.js'
import type { Store } from '../store/Store.js'
import type { ResolvedOptions } from './patternOptions.js'
import type { CandidateSpec } from './runCandidates.js'

/**
 * Unsandboxed command candidates under an HTTP effects policy. A plain process is not
 * confined to forkpoint's effects proxy (it may ignore the proxy variables or open its own
 * sockets), so its irreversible requests cannot be held: refused unless the caller
 * acknowledges it (`allowUnsandboxedEffects`). Returns the warning to show when
 * acknowledged, or null when there is nothing to say.
 * @throws {UsageError} (exit 2) such candidates and a policy, not acknowledged
 */
export async function unsandboxedEffects(store: Store, specs: CandidateSpec[], options: Pick<ResolvedOptions, 'isolate' | 'allowUnsandboxedEffects'>): Promise<string | null> {
  const commands = options.isolate ? [] : specs.filter((s) => typeof s.candidate !== 'function')
  if (commands.length === 0) return null
  const file = store.path(HTTP_POLICY_FILE)
  const fromFile = commands.some((s) => s.httpPolicy === undefined) ? await loadHttpPolicy(store) : null
  if (!fromFile && !commands.some((s) => s.httpPolicy)) return null
  if (!options.allowUnsandboxedEffects)
    throw new UsageError(
      `${file} sets an HTTP effects policy, and unsandboxed candidates (--no-isolate) can send around forkpoint's proxy, so their effects cannot be held: sandboxed candidates hold them (leave out --no-isolate), or run unsandboxed anyway with --allow-unsandboxed-effects (library: allowUnsandboxedEffects: true)`,
      { file, option: 'allow-unsandboxed-effects' },
    )
  return `effects may escape: unsandboxed candidates run under the policy of ${file} only as far as they send through forkpoint's proxy (HTTP_PROXY, the Node hook); a request made around it is sent at once and never held`
}
