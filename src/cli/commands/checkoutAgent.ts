import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { short } from '../format.js'
import { emit } from '../output.js'

export function registerCheckoutAgent(program: Command): void {
  common(program.command('checkout-agent <ID>'))
    .description('write every layer of an image into a new directory: world/, env.json, trace.jsonl or trace.run.json, layers/, image.json')
    .requiredOption('--into <dir>', 'a new or empty directory to write it into')
    .action(async (id: string, opts: { into: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { checkoutAgent } = await import('../../image/checkoutAgent.js')
      const result = await checkoutAgent({ id, dir: flags.dir, store: flags.store, into: opts.into })
      emit(flags, result, (r) => `checked out image ${short(r.id)} into ${r.target}: ${r.written.join(', ')}`)
    })
}
