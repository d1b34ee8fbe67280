import type { Command } from 'commander'
import { StoreCorruptError } from '../../errors/index.js'
import type { VerifyResult } from '../../store/verify.js'
import { type Where, common, commonFlags, storeAt } from '../context.js'
import { type View, print } from '../output.js'

/** `forkpoint verify`: every object re-hashed and everything reachable checked present. */
export async function verifyCommand(where: Where): Promise<VerifyResult> {
  const { verify } = await import('../../store/verify.js')
  return verify({ store: await storeAt(where) })
}

export const verifyView: View<VerifyResult> = {
  human: (r) =>
    [
      ...r.problems.map((p) => (p.type === 'corrupt' ? `corrupt: ${p.digest} (hashes to ${p.actual})` : `missing: ${p.digest} (referenced by ${p.referencedBy})`)),
      `${r.checked} objects checked, ${r.problems.length} problems`,
    ].join('\n'),
  exit: (r) => (r.ok ? 0 : new StoreCorruptError(`store has ${r.problems.length} bad or missing objects`, { problems: r.problems.length })),
}

export function registerVerify(program: Command): void {
  common(program.command('verify'))
    .description('re-hash every object and check that everything reachable is present (exit 5 if not)')
    .action(async (_opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await verifyCommand({ dir: flags.dir, store: flags.store }), verifyView)
    })
}
