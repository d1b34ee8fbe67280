import type { Command } from 'commander'
import { UsageError } from '../../errors/index.js'
import type { ForkImageCacheResult } from '../../image/cache/forkImageCache.js'
import { type Where, common, commonFlags } from '../context.js'
import { short } from '../../operations/text/format.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { wholeNumber } from '../wholeNumber.js'

export interface LlmForkOptions extends Where {
  id: string
  modelFile: string
  k: string
  vary?: string[]
  maxTokens?: string
  score?: string
}

/** `forkpoint llm fork IMAGE`: K continuations from an image's KV-cache layer; with --score, a new image holding the best one's state. */
export async function llmForkCommand({ dir, store, id, modelFile, k, vary, maxTokens, score }: LlmForkOptions): Promise<ForkImageCacheResult> {
  const [{ forkImageCache }, { scoreByCommand }] = await Promise.all([import('../../image/cache/forkImageCache.js'), import('../../image/cache/scoreByCommand.js')])
  return forkImageCache({
    dir,
    store,
    id,
    modelPath: modelFile,
    k: wholeNumber('llm fork', '-k', k, 1),
    vary: parseVary(vary ?? []),
    ...(maxTokens !== undefined ? { maxTokens: wholeNumber('llm fork', '--max-tokens', maxTokens, 1) } : {}),
    ...(score !== undefined ? { scorer: scoreByCommand(score, dir ?? process.cwd()) } : {}),
  })
}

/** `--vary temperature=0.2,0.7,1.0 --vary seed=1,2,3`. */
function parseVary(specs: string[]): { temperature?: number[]; seed?: number[] } {
  const vary: { temperature?: number[]; seed?: number[] } = {}
  for (const spec of specs) {
    const at = spec.indexOf('=')
    const name = spec.slice(0, Math.max(0, at))
    const parts = at === -1 ? [] : spec.slice(at + 1).split(',')
    const values = parts.map((p) => (p.trim() === '' ? NaN : Number(p)))
    const fits = (v: number) => Number.isFinite(v) && v >= 0 && (name !== 'seed' || (Number.isInteger(v) && v < 2 ** 32))
    if ((name !== 'temperature' && name !== 'seed') || values.length === 0 || !values.every(fits))
      throw new UsageError(`llm fork: --vary takes temperature=A,B,… (numbers, 0 or more) or seed=A,B,… (whole numbers under 2^32), not ${JSON.stringify(spec)}`)
    vary[name] = values
  }
  return vary
}

export const llmForkView: Rendering<ForkImageCacheResult> = {
  human: (r) =>
    [
      ...r.children.map(
        (c) =>
          `${c.index}\ttemperature ${c.temperature}${c.seed !== undefined ? ` seed ${c.seed}` : ''}${c.score !== undefined ? `\tscore ${c.score}` : ''}\t${JSON.stringify(c.text)}`,
      ),
      ...(r.image ? [`best: child ${r.best!.index}, image ${short(r.image)} (${r.ref})`] : []),
    ].join('\n'),
}

/** `forkpoint llm export-lora IMAGE -o FILE`: an image's LoRA adapter as a GGUF adapter llama.cpp loads. */
export async function llmExportLoraCommand(
  options: Where & { id: string; out: string; file?: string; alpha?: string; architecture?: string },
): Promise<{ out: string; tensors: number; alpha: number }> {
  const { exportLoraGguf } = await import('../../image/model/exportLoraGguf.js')
  const alpha = options.alpha === undefined ? undefined : options.alpha.trim() === '' ? NaN : Number(options.alpha)
  if (alpha !== undefined && !(Number.isFinite(alpha) && alpha > 0)) throw new UsageError(`llm export-lora: --alpha must be a number above 0, not ${JSON.stringify(options.alpha)}`)
  const { alpha: _alpha, ...rest } = options
  return exportLoraGguf({ ...rest, ...(alpha !== undefined ? { alpha } : {}) })
}

export const llmExportLoraView: Rendering<{ out: string; tensors: number; alpha: number }> = { human: (r) => `${r.out}: ${r.tensors} tensors, alpha ${r.alpha}` }

export function registerLlm(program: Command): void {
  const llm = program.command('llm').description("an LLM's KV-cache layer, with llama.cpp on the CPU (node-llama-cpp)")
  common(llm.command('fork <image>'))
    .description("continue K children from an image's KV-cache layer, each with its own sampling; none evaluates the cached prompt again")
    .requiredOption('--model-file <gguf>', 'the GGUF model the cache was made with (checked against the layer)')
    .option('-k <n>', 'how many children', '3')
    .option('--vary <name=values>', 'per child: temperature=0.2,0.7,1.0 or seed=1,2,3 (repeatable; a short list repeats its last value)', (v: string, prev: string[] = []) => [
      ...prev,
      v,
    ])
    .option('--max-tokens <n>', 'tokens each child generates (default 32)')
    .option(
      '--score <cmd>',
      'score each continuation (its text on stdin; prints a number, higher is better): the best state becomes a new image, kept as a fork child (refs/forks/<id>/<i>)',
    )
    .action(async (id: string, opts: Omit<LlmForkOptions, keyof Where | 'id'>, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await llmForkCommand({ dir: flags.dir, ...(flags.store ? { store: flags.store } : {}), id, ...opts }), llmForkView)
    })
  common(llm.command('export-lora <image>'))
    .description("write an image's LoRA adapter (its model layer, PEFT safetensors) as a GGUF adapter llama.cpp loads")
    .requiredOption('-o, --out <file>', 'the GGUF file to write')
    .option('--file <name>', 'the safetensors file of the model layer (default: the only one, or adapter_model.safetensors)')
    .option('--alpha <a>', "LoRA alpha (default: adapter_config.json's lora_alpha)")
    .option('--architecture <name>', "the base model's llama.cpp architecture", 'llama')
    .action(async (id: string, opts: { out: string; file?: string; alpha?: string; architecture?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await llmExportLoraCommand({ dir: flags.dir, ...(flags.store ? { store: flags.store } : {}), id, ...opts }), llmExportLoraView)
    })
}
