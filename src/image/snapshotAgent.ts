import { resolve } from 'node:path'
import { openStore } from '../store/findStore.js'
import { MalformedObjectError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import { readRef } from '../store/refs.js'
import { resolveId } from '../store/resolveId.js'
import type { Store } from '../store/Store.js'
import { readSnapshot } from '../world/tree/readObjects.js'
import type { SnapshotLayer } from '../objects/Snapshot.js'
import { type SnapshotArgs, type SnapshotResult, snapshotWorkspace } from '../world/scan/snapshotWorkspace.js'
import { captureEnv, type EnvChoice } from './captureEnv.js'
import { storedKind } from './readImage.js'
import { storeModelDir } from './model/modelLayer.js'
import { runSinceSnapshot, traceLayer } from './traceLayer.js'

export interface SnapshotAgentArgs extends Omit<SnapshotArgs, 'env'> {
  /**
   * The trace layer: a run id / prefix / `latest`, a `*.run.json` file or a `*.jsonl` chat
   * transcript. Unset: the run recorded since the last snapshot, if any. `false`: none new.
   */
  trace?: string | false
  /** Record the environment (`process.env` when `true`), secrets scrubbed as `keepEnv` / `scrubEnv` say. */
  env?: boolean | NodeJS.ProcessEnv
  keepEnv?: string[]
  scrubEnv?: string[]
  /** The effects layer: a `ledger` object by id. */
  effects?: string
  /** The model layer: a directory of adapter or model files (safetensors, configs). */
  model?: string
}

export interface SnapshotAgentResult extends SnapshotResult {
  /** The layers this snapshot was given (the others, if any, carried from its parent). */
  attached: Partial<Record<SnapshotLayer, Digest>>
}

/** Snapshot the whole agent: the workspace plus the trace, environment, effects and model layers asked for. */
export async function snapshotAgent(args: SnapshotAgentArgs = {}): Promise<SnapshotAgentResult> {
  const { store, workspace } = await openStore(args)
  const attached: Partial<Record<SnapshotLayer, Digest>> = { ...args.layers }
  const trace = await chooseTrace(store, args.trace, workspace)
  if (trace) attached.trace = trace
  if (args.effects !== undefined) attached.effects = await ledgerLayer(store, args.effects)
  if (args.model !== undefined) attached.model = await storeModelDir(store, resolve(args.model))
  const { env: source, trace: _trace, effects: _effects, keepEnv: _keep, scrubEnv: _scrub, model: _model, ...rest } = args
  const env = source ? captureEnv(source === true ? process.env : source, envChoice(args)) : undefined
  const result = await snapshotWorkspace({ ...rest, dir: workspace, store, layers: attached, ...(env ? { env } : {}) })
  return { ...result, attached }
}

async function chooseTrace(store: Store, spec: string | false | undefined, cwd: string): Promise<Digest | null> {
  if (spec === false) return null
  if (spec !== undefined) return traceLayer({ store, spec, cwd, env: process.env }) // a transcript loses the values of the caller's secrets
  const head = await readRef(store, 'HEAD')
  return runSinceSnapshot(store, head ? await readSnapshot(store, head) : null)
}

/** A ledger object named by id (exit 5 when the id names another kind of object). */
async function ledgerLayer(store: Store, spec: string): Promise<Digest> {
  const digest = await resolveId(store, spec)
  const kind = await storedKind(store, digest)
  if (kind !== 'ledger')
    throw new MalformedObjectError(`--effects ${spec} names ${digest}, a ${kind} object; the effects layer must be a ledger`, { digest, expected: 'ledger', actual: kind })
  return digest
}

function envChoice(args: SnapshotAgentArgs): EnvChoice {
  return { ...(args.keepEnv ? { keep: args.keepEnv } : {}), ...(args.scrubEnv ? { scrub: args.scrubEnv } : {}) }
}
