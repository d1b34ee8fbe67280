import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerVerify(program: Command): void {
  common(program.command('verify'))
    .description('re-hash every object, check that everything reachable is present, and the effects ledger of every image (exit 5 if not)')
    .action(async (_opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { verify } = await import('../../store/verify.js')
      const { resolveWorkspace } = await import('../../world/snapshotWorkspace.js')
      const { StoreCorruptError } = await import('../../errors/index.js')
      const { store } = await resolveWorkspace({ dir: flags.dir, store: flags.store })
      const { verifyLedgers } = await import('../../image/verifyLedgers.js')
      const result = { ...(await verify({ store })), ledgers: await verifyLedgers({ store }) }
      emit(flags, result, (r) =>
        [
          ...r.problems.map((p) => (p.type === 'corrupt' ? `corrupt: ${p.digest} (hashes to ${p.actual})` : `missing: ${p.digest} (referenced by ${p.referencedBy})`)),
          ...r.ledgers.problems.map((p) => `tampered ledger: ${p.ledger} (effects of ${p.image}): ${p.reason}`),
          ...(r.ledgers.unkeyed.length > 0 ? [`${r.ledgers.unkeyed.length} HMAC-chained ledgers not checked: set FORKPOINT_KEY`] : []),
          `${r.checked} objects checked, ${r.problems.length} problems; ${r.ledgers.checked} ledgers checked, ${r.ledgers.problems.length} tampered`,
        ].join('\n'),
      )
      if (!result.ok) throw new StoreCorruptError(`store has ${result.problems.length} bad or missing objects`, { problems: result.problems.length })
      if (result.ledgers.problems.length > 0) throw new StoreCorruptError(`${result.ledgers.problems.length} effects ledger(s) tampered with (chain broken or edited)`, { ledgers: result.ledgers.problems.length })
    })
}
