import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerVerify(program: Command): void {
  common(program.command('verify'))
    .description('re-hash every object and check that everything reachable is present (exit 5 if not)')
    .action(async (_opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { verify } = await import('../../store/verify.js')
      const { openStore } = await import('../../store/findStore.js')
      const { StoreCorruptError } = await import('../../errors/index.js')
      const { store } = await openStore({ dir: flags.dir, store: flags.store })
      const result = await verify({ store })
      emit(flags, result, (r) =>
        [
          ...r.problems.map((p) => (p.type === 'corrupt' ? `corrupt: ${p.digest} (hashes to ${p.actual})` : `missing: ${p.digest} (referenced by ${p.referencedBy})`)),
          `${r.checked} objects checked, ${r.problems.length} problems`,
        ].join('\n'),
      )
      if (!result.ok) throw new StoreCorruptError(`store has ${result.problems.length} bad or missing objects`, { problems: result.problems.length })
    })
}
