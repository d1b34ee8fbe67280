import type { Command } from 'commander'
import type { CheckoutAgentResult } from '../../image/checkoutAgent.js'
import { type Where, common, commonFlags } from '../context.js'
import { short } from '../../operations/text/format.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'

/** `forkpoint checkout-agent ID --into DIR`: every layer of an image written into a new directory. */
export async function checkoutAgentCommand(options: Where & { id: string; into: string }): Promise<CheckoutAgentResult> {
  const { checkoutAgent } = await import('../../image/checkoutAgent.js')
  return checkoutAgent(options)
}

export const checkoutAgentView: Rendering<CheckoutAgentResult> = { human: (r) => `checked out image ${short(r.id)} into ${r.target}: ${r.written.join(', ')}` }

export function registerCheckoutAgent(program: Command): void {
  common(program.command('checkout-agent <ID>'))
    .description('write every layer of an image into a new directory: world/, env.json, trace.jsonl or trace.run.json, layers/, image.json')
    .requiredOption('--into <dir>', 'a new or empty directory to write it into')
    .action(async (id: string, opts: { into: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await checkoutAgentCommand({ id, dir: flags.dir, store: flags.store, into: opts.into }), checkoutAgentView)
    })
}
