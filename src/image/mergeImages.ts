import { openStore, type StoreLocator } from '../store/findStore.js'
import { EffectKeyConflictError, UsageError } from '../errors/index.js'
import { mergeLedgers } from '../effects/mergeLedgers.js'
import { type Digest, shortId } from '../objects/digest.js'
import { resolveId } from '../store/resolveId.js'
import type { Store } from '../store/Store.js'
import { readSnapshot } from '../world/tree/readObjects.js'
import { type Snapshot, makeSnapshot } from '../objects/Snapshot.js'
import { type ConflictLabels } from '../world/merge/mergeLines.js'
import { DEFAULT_RENAMES, type RenameOptions } from '../world/diff/findRenames.js'
import { type PathConflict, type WorldMerge, mergeWorld } from '../world/merge/mergeWorld.js'
import type { StructuredObject } from '../objects/StructuredObject.js'
import type { Run } from '../objects/Run.js'
import { mergeRuns } from '../trace/diff/mergeRuns.js'
import { diffTrees } from '../world/diff/diffTrees.js'
import { cameFromElsewhere } from '../world/checkout/cameFromElsewhere.js'
import { isHeldBackGitPath } from '../world/checkout/heldBackGitPath.js'
import { keepTrustedGit } from '../world/checkout/keepTrustedGit.js'
import { treeSource } from '../world/tree/treeSource.js'
import { incomingImage } from './incomingImage.js'
import { mergeBases } from './mergeBases.js'
import { mergeModelLayers } from './model/mergeModels.js'
import { MODEL_MERGE_METHODS, type ModelMergeOptions } from './model/mergeTensors.js'
import { counted } from '../util/plural.js'

/** How one layer came out of a merge. */
export interface LayerReport {
  layer: string
  outcome: 'unchanged' | 'ours' | 'theirs' | 'merged' | 'conflict' | 'dropped'
  /** One line for people: `world: clean (3 paths)`, `world: conflict (1 path: src/a.ts)`. */
  summary: string
}

/** `heldBack`: what git would run that a side from another store brought, left as ours has it (`trustGit` takes it). */
export type ImageMerge =
  | { outcome: 'up-to-date'; id: Digest; layers: LayerReport[] }
  | { outcome: 'fast-forward'; id: Digest; layers: LayerReport[] }
  | { outcome: 'merged'; id: Digest; bases: Digest[]; layers: LayerReport[]; heldBack: string[] }
  /** Not written as a snapshot: `tree` is the world with both sides' versions, for a human to finish. */
  | {
      outcome: 'conflict'
      tree: Digest
      bases: Digest[]
      layers: LayerReport[]
      conflicts: PathConflict[]
      layerConflicts: string[]
      decided: DecidedLayers
      heldBack: string[]
    }

/** What a merge that stopped on conflicts decided beyond the world's tree: the env and every other layer (ours' version where both changed it). */
export interface DecidedLayers {
  env: Record<string, string>
  layers: Record<string, unknown>
}

export interface MergeImagesArgs extends StoreLocator {
  /** The image merged in (FROM). */
  theirs: string
  /** The image merged into (TO). */
  ours: string
  /** Merge images with no common ancestor, against an empty base. */
  allowUnrelated?: boolean
  message?: string
  now?: () => Date
  /** How a model layer both sides changed is merged (unset: it is a conflict). */
  modelMerge?: ModelMergeOptions
  /** How renames are found in the world (default: 50% similar, 1,000² pairs at most); false: not at all. */
  renames?: Partial<RenameOptions> | false
  /** Where FORKPOINT_KEY is read from, to verify the ledgers of the images merged, and to chain their union. @default process.env */
  env?: NodeJS.ProcessEnv
  /** Take the git config, hooks and `.git` files a side from another store brings (held back otherwise). */
  trustGit?: boolean
}

/** Layers other than the world: the trace merges its runs, the effects their ledgers; the rest, with no merge of their own yet, are kept from the side that changed them. */
const OPAQUE_LAYER_KEYS = (s: Snapshot): string[] => Object.keys(s).filter((k) => !['kind', 'schemaVersion', 'parents', 'world', 'meta'].includes(k))

/**
 * Merge image `theirs` into image `ours`, layer by layer, three-way against their merge
 * base as git chooses it (several bases after criss-cross merges are merged first into a
 * virtual base; none is a usage error unless `allowUnrelated`). The world merges path by
 * path and line by line (`mergeWorld`); `world.env` key by key; a layer without a merge of
 * its own is taken from the side that changed it, and is a conflict when both did. Clean:
 * a snapshot with both as parents is written and returned (not yet pointed at by any ref).
 * @throws {UsageError} when the images share no history and `allowUnrelated` is not set
 * @throws {MalformedObjectError} @throws {LedgerTamperedError} theirs has a layer of the wrong kind or a broken ledger (exit 5)
 */
export async function mergeImages({
  theirs,
  ours,
  allowUnrelated = false,
  message,
  now = () => new Date(),
  modelMerge,
  renames: asked,
  env: callerEnv = process.env,
  trustGit = false,
  ...locator
}: MergeImagesArgs): Promise<ImageMerge> {
  const renames = asked === false ? false : { ...DEFAULT_RENAMES, ...asked }
  const { store } = await openStore(locator)
  const [oursId, theirsId] = await Promise.all([resolveId(store, ours), resolveId(store, theirs)])
  const bases = await mergeBases({ store, a: oursId, b: theirsId })
  if (bases.includes(theirsId)) return { outcome: 'up-to-date', id: oursId, layers: [] }
  const t = await incomingImage(store, theirsId, callerEnv)
  if (bases.includes(oursId)) return { outcome: 'fast-forward', id: theirsId, layers: [] }
  if (bases.length === 0 && !allowUnrelated) {
    throw new UsageError(`${shortId(theirsId)} and ${shortId(oursId)} share no history; pass --allow-unrelated to merge them against an empty base`, {
      ours: oursId,
      theirs: theirsId,
    })
  }
  const o = await readSnapshot(store, oursId)
  const base = bases.length === 0 ? null : await virtualBase(store, bases, renames)
  const labels: ConflictLabels = { ours: shortId(oursId), base: bases.length === 1 ? shortId(bases[0]!) : 'merge base', theirs: shortId(theirsId) }
  const merged = await mergeWorld({ store, base: base?.world.tree ?? null, ours: o.world.tree, theirs: t.world.tree, labels, renames })
  const foreign = !trustGit && ((await cameFromElsewhere(store, theirsId)) || (await cameFromElsewhere(store, oursId)))
  const { world, heldBack } = foreign ? await holdBackMergedGit(store, o.world.tree, merged) : { world: merged, heldBack: [] }
  const env = mergeEnv(base?.world.env ?? {}, o.world.env ?? {}, t.world.env ?? {})
  const layers: LayerReport[] = [worldReport(world, base?.world.tree === o.world.tree ? 'theirs' : null)]
  const picked: Record<string, unknown> = {}
  const layerConflicts: string[] = env.conflicts.map((k) => `world.env.${k}`)
  for (const key of [...new Set([...OPAQUE_LAYER_KEYS(o), ...OPAQUE_LAYER_KEYS(t)])].sort()) {
    const [b, mine, yours] = [base?.[key], o[key], t[key]].map((v) => JSON.stringify(v))
    const side = mine === yours ? 'unchanged' : b === mine ? 'theirs' : b === yours ? 'ours' : 'conflict'
    if (key === 'cache' && side !== 'unchanged') {
      // a KV-cache holds the tokens of one conversation: after a merge neither side's is the merged one's
      layers.push({ layer: key, outcome: 'dropped', summary: 'cache: dropped (the sides differ; the next turn evaluates the prompt again)' })
      continue
    }
    if (side === 'conflict' && key === 'model') {
      const model = await mergeModelLayers(store, base?.model, o.model!, t.model!, modelMerge)
      if (model.outcome === 'merged') {
        picked[key] = model.digest
        layers.push({
          layer: key,
          outcome: 'merged',
          summary: modelMerge
            ? `model: merged with ${modelMerge.method} (${counted(model.tensors, 'tensor')} in ${counted(model.files, 'file')} combined)`
            : 'model: merged (no file changed on both sides)',
        })
        continue
      }
      const paths = model.conflicts
      const hint = modelMerge ? '' : `; pass --model-merge ${MODEL_MERGE_METHODS.join('|')}`
      layers.push({ layer: key, outcome: 'conflict', summary: `model: conflict (${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}${hint})` })
      layerConflicts.push(key)
      continue
    }
    if (side === 'conflict' && key === 'trace') {
      const trace = await mergeTraces(store, o.trace!, t.trace!, base?.world.tree ?? null, t.world.tree, now)
      if (trace) {
        picked[key] = trace.digest
        layers.push({
          layer: key,
          outcome: 'merged',
          summary: `trace: merged (${trace.shared} shared steps, ours' ${trace.ours} after them, theirs' ${trace.theirs} summed up in one step)`,
        })
        continue
      }
    }
    if (side === 'conflict' && key === 'effects') {
      const effects = await mergeEffects(store, o.effects!, t.effects!, callerEnv)
      if (effects) {
        picked[key] = effects.digest
        layers.push({ layer: key, outcome: 'merged', summary: `effects: merged (${effects.entries} entries, union by idempotency key)` })
        continue
      }
      layers.push({ layer: key, outcome: 'conflict', summary: 'effects: conflict (one idempotency key with two different results)' })
      layerConflicts.push(key)
      continue
    }
    if (side === 'conflict') layerConflicts.push(key)
    else if ((side === 'theirs' ? t[key] : o[key]) !== undefined) picked[key] = side === 'theirs' ? t[key] : o[key]
    layers.push({
      layer: key,
      outcome: side,
      summary: `${key}: ${side === 'conflict' ? 'conflict (both sides changed it)' : side === 'unchanged' ? 'unchanged' : `taken from ${side}`}`,
    })
  }
  if (world.conflicts.length > 0 || layerConflicts.length > 0) {
    const oursWhereBothChanged = Object.fromEntries(layerConflicts.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]))
    const decided = { env: env.merged, layers: { ...picked, ...oursWhereBothChanged } }
    return { outcome: 'conflict', tree: world.tree, bases, layers, conflicts: world.conflicts, layerConflicts, decided, heldBack }
  }
  const snapshot: Snapshot = {
    ...makeSnapshot({ parents: [oursId, theirsId], tree: world.tree, env: env.merged, message: message ?? `merge ${shortId(theirsId)} into ${shortId(oursId)}`, createdAt: now() }),
    ...picked,
  }
  return { outcome: 'merged', id: await store.writeObject(snapshot), bases, layers, heldBack }
}

/** The merged world with what git would run as ours has it (`keepTrustedGit`), its conflicts there dropped with it. */
async function holdBackMergedGit(store: Store, ours: Digest, merged: WorldMerge): Promise<{ world: WorldMerge; heldBack: string[] }> {
  const { tree, heldBack } = await keepTrustedGit(store, ours, merged.tree)
  return { world: { ...merged, tree, conflicts: merged.conflicts.filter((c) => !isHeldBackGitPath(c.path, false)) }, heldBack }
}

/**
 * Both sides' runs merged (`mergeRuns`): null when either is encrypted (the summary step
 * would sit unsealed among sealed ones), which leaves the layer a conflict.
 * @throws {MalformedObjectError} when a trace layer is not a run
 */
async function mergeTraces(
  store: Store,
  ours: Digest,
  theirs: Digest,
  baseTree: Digest | null,
  theirTree: Digest,
  now: () => Date,
): Promise<{ digest: Digest; shared: number; ours: number; theirs: number } | null> {
  // a trace layer is a run: anything else is a hostile or broken image (exit 5)
  const [mine, yours] = (await Promise.all([ours, theirs].map((d) => store.readObject<StructuredObject>(d, 'run')))) as unknown as [Run, Run]
  if (mine.encryption || yours.encryption) return null
  const changedPaths = (await diffTrees({ source: treeSource(store), a: baseTree, b: theirTree })).map((c) => c.path)
  const merged = mergeRuns({ ours: mine, theirs: yours, changedPaths, now })
  const shared = (merged.meta['merge'] as { sharedSteps: number }).sharedSteps
  return { digest: await store.writeObject(merged), shared, ours: mine.steps.length - shared, theirs: yours.steps.length - shared }
}

/** Both ledgers' union (`mergeLedgers`); null when one key ran with two different results. A tampered ledger throws (exit 5). */
async function mergeEffects(store: Store, ours: Digest, theirs: Digest, env: NodeJS.ProcessEnv): Promise<{ digest: Digest; entries: number } | null> {
  try {
    const { digest, ledger } = await mergeLedgers({ store, ours, theirs, env })
    return { digest, entries: ledger.entries.length }
  } catch (err) {
    if (err instanceof EffectKeyConflictError) return null
    throw err
  }
}

/**
 * The base to merge against: the one merge base, or, after criss-cross merges, the merge of
 * the bases themselves (recursively, against their own bases), conflicts and all, as git's
 * recursive strategy builds its virtual ancestor. Only its world is used.
 */
async function virtualBase(store: Store, bases: Digest[], renames: RenameOptions | false): Promise<Snapshot> {
  let merged = await readSnapshot(store, bases[0]!)
  for (const next of bases.slice(1)) {
    const other = await readSnapshot(store, next)
    const below = await mergeBases({ store, a: bases[0]!, b: next })
    const deeper = below.length === 0 ? null : await virtualBase(store, below, renames)
    const world = await mergeWorld({
      store,
      base: deeper?.world.tree ?? null,
      ours: merged.world.tree,
      theirs: other.world.tree,
      labels: { ours: 'base 1', base: 'base of bases', theirs: 'base 2' },
      renames,
    })
    merged = { ...merged, world: { ...merged.world, tree: world.tree } }
  }
  return merged
}

/** `world.env` three-way, key by key; a key both sides set differently is a conflict (ours kept). */
function mergeEnv(base: Record<string, string>, ours: Record<string, string>, theirs: Record<string, string>): { merged: Record<string, string>; conflicts: string[] } {
  const merged: Record<string, string> = {}
  const conflicts: string[] = []
  for (const key of [...new Set([...Object.keys(base), ...Object.keys(ours), ...Object.keys(theirs)])].sort()) {
    const [b, o, t] = [base[key], ours[key], theirs[key]]
    const value = o === t ? o : b === o ? t : b === t ? o : (conflicts.push(key), o)
    if (value !== undefined) merged[key] = value
  }
  return { merged, conflicts }
}

function worldReport({ conflicts, lineMerged, renames, inexactRenamesSkipped }: WorldMerge, onlyTheirs: 'theirs' | null): LayerReport {
  const skipped = inexactRenamesSkipped ? '; too many files to compare for renames: only identical ones paired' : ''
  if (conflicts.length > 0) {
    const paths = conflicts.map(describeConflict)
    return {
      layer: 'world',
      outcome: 'conflict',
      summary: `world: conflict (${counted(paths.length, 'path')}: ${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}${skipped})`,
    }
  }
  const merged = lineMerged.length > 0 ? `, ${lineMerged.length} merged line by line` : ''
  const renamed = renames.length > 0 ? `, ${counted(renames.length, 'rename')} found` : ''
  return { layer: 'world', outcome: onlyTheirs ?? 'merged', summary: `world: clean${merged}${renamed}${skipped}` }
}

/** A path conflict for people: the path, and for a rename conflict where each side put the file. */
function describeConflict({ path, kind, kept }: PathConflict): string {
  if (kind === 'rename/rename') return `${path} renamed to ${kept.ours} (ours) and to ${kept.theirs} (theirs)`
  if (kind === 'rename/delete') return kept.ours ? `${path} renamed to ${kept.ours} (ours), deleted (theirs)` : `${path} deleted (ours), renamed to ${kept.theirs} (theirs)`
  return path
}
