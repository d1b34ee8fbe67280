import { z } from 'zod'
import { StoreCorruptError } from '../../errors/index.js'
import { counted } from '../../util/plural.js'
import { defineOperation } from '../operation.js'
import { digest } from '../schemas.js'

const objectProblem = z.union([
  z.object({ type: z.literal('corrupt'), digest, actual: z.union([digest, z.literal('damaged')]).describe('what the object hashes to') }),
  z.object({ type: z.literal('missing'), digest, referencedBy: z.union([digest, z.literal('root')]).describe('the object that names it, or root: a ref or reflog entry') }),
])

const ledgerProblem = z.object({
  ledger: digest,
  image: digest.optional().describe('the image whose effects layer it is (when no ref under refs/effects/ holds it)'),
  ref: z.string().optional().describe("the ref under refs/effects/ that holds it: the workspace's ledger, a live branch's outbox"),
  reason: z.string().describe('chain, head, seq, conflict, malformed, ...'),
  message: z.string(),
})

const verified = z.object({
  ok: z.boolean().describe('every object hashes right and everything reachable is present'),
  checked: z.number(),
  problems: z.array(objectProblem),
  ledgers: z.object({
    checked: z.number(),
    unkeyed: z.array(digest).describe('HMAC-chained ledgers left unchecked: FORKPOINT_KEY is not set'),
    problems: z.array(ledgerProblem),
  }),
})

type Verified = z.infer<typeof verified>

export const verify = defineOperation({
  name: 'verify',
  description:
    'Re-hash every object, check that everything reachable is present, and every effects ledger (of each image, and under refs/effects/): a problem is exit 5 on the command line.',
  input: {},
  output: verified,
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: { usage: 'verify', rendering: { human: verifyLines, exit: verifyExit } },
  async run(where, _args, { env }) {
    const { verify } = await import('../../store/verify.js')
    const { verifyLedgers } = await import('../../image/verifyLedgers.js')
    const { openStore } = await import('../../store/findStore.js')
    const { store } = await openStore(where)
    return { ...(await verify({ store })), ledgers: await verifyLedgers({ store, env }) }
  },
})

function verifyLines(r: Verified): string {
  return [
    ...r.problems.map((p) => (p.type === 'corrupt' ? `corrupt: ${p.digest} (hashes to ${p.actual})` : `missing: ${p.digest} (referenced by ${p.referencedBy})`)),
    ...r.ledgers.problems.map((p) => `tampered ledger: ${p.ledger} (${p.ref ? `held by ${p.ref}` : `effects of ${p.image}`}): ${p.reason}`),
    ...(r.ledgers.unkeyed.length > 0 ? [`${r.ledgers.unkeyed.length} HMAC-chained ledgers not checked: set FORKPOINT_KEY`] : []),
    `${counted(r.checked, 'object')} checked, ${counted(r.problems.length, 'problem')}; ${counted(r.ledgers.checked, 'ledger')} checked, ${r.ledgers.problems.length} tampered`,
  ].join('\n')
}

function verifyExit(r: Verified): number | Error {
  if (!r.ok) return new StoreCorruptError(`store has ${r.problems.length} bad or missing objects`, { problems: r.problems.length })
  if (r.ledgers.problems.length > 0)
    return new StoreCorruptError(`${r.ledgers.problems.length} effects ledger(s) tampered with (chain broken or edited): ${r.ledgers.problems.map(ledgerName).join(', ')}`, {
      ledgers: r.ledgers.problems.length,
    })
  return 0
}

function ledgerName({ ledger, ref, image }: Verified['ledgers']['problems'][number]): string {
  return ref ?? `${ledger} (effects of ${image})`
}
