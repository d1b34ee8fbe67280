import { fileURLToPath } from 'node:url'
import type fc from 'fast-check'
import { mutatedBytes } from './byteMutations.js'
import type { Corpus } from './corpus.js'
import { mutatedJson, mutatedJsonLines } from './jsonMutations.js'
import type { FuzzTarget } from './Target.js'
import { mutatedText } from './textMutations.js'

/** The module the target processes open targets from. */
export const TARGETS_MODULE = fileURLToPath(new URL('./targets.ts', import.meta.url))

type Mutate = (seeds: Buffer[]) => fc.Arbitrary<Buffer>

/** Each target of fuzz/targets.ts: how its inputs are mutated and the extension a finding is saved with. */
const TARGETS: Array<{ name: string; ext: string; mutate: Mutate }> = [
  { name: 'pack', ext: 'fpk', mutate: mutatedBytes },
  { name: 'objects', ext: 'json', mutate: mutatedJson },
  { name: 'layout', ext: 'json', mutate: mutatedJson },
  { name: 'safetensors', ext: 'safetensors', mutate: mutatedBytes },
  { name: 'run-artifact', ext: 'run.json', mutate: mutatedJson },
  { name: 'transcript', ext: 'jsonl', mutate: mutatedJsonLines },
  { name: 'ledger', ext: 'json', mutate: mutatedJson },
  { name: 'machine', ext: 'json', mutate: mutatedJson },
  { name: 'redaction', ext: 'txt', mutate: mutatedText },
]

export const TARGET_NAMES = TARGETS.map((t) => t.name)

/** The targets (all, or those named) with their inputs drawn from the corpus's seeds. */
export function fuzzTargets(corpus: Corpus, only?: string[]): FuzzTarget[] {
  const unknown = only?.filter((n) => !TARGET_NAMES.includes(n)) ?? []
  if (unknown.length > 0) throw new Error(`unknown fuzz target ${unknown.join(', ')}: one of ${TARGET_NAMES.join(', ')}`)
  return TARGETS.filter((t) => !only || only.includes(t.name)).map((t) => ({ name: t.name, ext: t.ext, inputs: t.mutate(corpus.seeds[t.name]!) }))
}

/** The target a regression file belongs to, from its name (`<target>-<hash>.<ext>`). */
export function targetOfFile(file: string): string | undefined {
  return TARGET_NAMES.filter((n) => file.startsWith(`${n}-`)).sort((a, b) => b.length - a.length)[0]
}
