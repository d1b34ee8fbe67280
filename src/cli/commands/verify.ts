import type { Command } from 'commander'
import { StoreCorruptError } from '../../errors/index.js'
import type { VerifyLedgersResult } from '../../image/verifyLedgers.js'
import type { VerifyResult } from '../../store/verify.js'
import { type Where, common, commonFlags } from '../context.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { counted } from '../../util/plural.js'

export type VerifyReport = VerifyResult & { ledgers: VerifyLedgersResult }

/** `forkpoint verify`: every object re-hashed, everything reachable checked present, and the effects ledger of every kept image checked. */
export async function verifyCommand(where: Where): Promise<VerifyReport> {
  const { verify } = await import('../../store/verify.js')
  const { verifyLedgers } = await import('../../image/verifyLedgers.js')
  const { openStore } = await import('../../store/findStore.js')
  const { store } = await openStore(where)
  return { ...(await verify({ store })), ledgers: await verifyLedgers({ store, env: process.env }) }
}

export const verifyView: Rendering<VerifyReport> = {
  human: (r) =>
    [
      ...r.problems.map((p) => (p.type === 'corrupt' ? `corrupt: ${p.digest} (hashes to ${p.actual})` : `missing: ${p.digest} (referenced by ${p.referencedBy})`)),
      ...r.ledgers.problems.map((p) => `tampered ledger: ${p.ledger} (${p.ref ? `held by ${p.ref}` : `effects of ${p.image}`}): ${p.reason}`),
      ...(r.ledgers.unkeyed.length > 0 ? [`${r.ledgers.unkeyed.length} HMAC-chained ledgers not checked: set FORKPOINT_KEY`] : []),
      `${counted(r.checked, 'object')} checked, ${counted(r.problems.length, 'problem')}; ${counted(r.ledgers.checked, 'ledger')} checked, ${r.ledgers.problems.length} tampered`,
    ].join('\n'),
  exit(r) {
    if (!r.ok) return new StoreCorruptError(`store has ${r.problems.length} bad or missing objects`, { problems: r.problems.length })
    if (r.ledgers.problems.length > 0)
      return new StoreCorruptError(`${r.ledgers.problems.length} effects ledger(s) tampered with (chain broken or edited): ${r.ledgers.problems.map(ledgerName).join(', ')}`, {
        ledgers: r.ledgers.problems.length,
      })
    return 0
  },
}

function ledgerName({ ledger, ref, image }: VerifyLedgersResult['problems'][number]): string {
  return ref ?? `${ledger} (effects of ${image})`
}

export function registerVerify(program: Command): void {
  common(program.command('verify'))
    .description('re-hash every object, check that everything reachable is present, and every effects ledger (of each image, and under refs/effects/) (exit 5 if not)')
    .action(async (_opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await verifyCommand({ dir: flags.dir, store: flags.store }), verifyView)
    })
}
