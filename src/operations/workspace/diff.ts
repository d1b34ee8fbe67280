import { z } from 'zod'
import { renderRunDiff } from '../../trace/diff/renderRunDiff.js'
import { defineOperation } from '../operation.js'
import { fileRule } from '../requestPolicy.js'
import { runDiff, snapshotDiff } from '../schemas.js'
import { formatChanges, short } from '../text/format.js'

const runsDiff = z.object({ trace: runDiff })
const patched = snapshotDiff.extend({ patch: z.string(), patchTruncated: z.boolean() })

export const diff = defineOperation({
  name: 'diff',
  description:
    "What changed between two snapshots (b defaults to the workspace), with patch a unified diff in git's format (binary files and files over 8 MiB named, not shown; whole files up to 16 MiB, then patchTruncated), or between two recorded runs up to their first divergence.",
  input: {
    a: z.string().min(1).describe('a snapshot or a run'),
    b: z.string().min(1).optional().describe('a snapshot or a run'),
    patch: z.boolean().optional().describe("snapshots: add the unified diff of their files in git's format"),
    window: z.number().int().min(1).max(1000).optional().describe('runs: how many steps ahead to look when resyncing past inserted or deleted steps (default 10)'),
  },
  output: z.union([patched, snapshotDiff, runsDiff]),
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: {
    usage: 'diff <a> [b]',
    short: { patch: 'p' },
    rendering: {
      human(r) {
        if ('trace' in r) return renderRunDiff(r.trace)
        if ('patch' in r) return r.patch
        const s = r.summary
        const head = `${short(r.a)} -> ${r.b ? short(r.b) : 'workspace'}: ${s.added} added, ${s.deleted} deleted, ${s.modified} modified, ${s.mode} mode, ${s.typechange} type`
        return r.changes.length ? `${head}\n${formatChanges(r.changes)}` : `${head}\nno differences`
      },
      exit: (r) => (('trace' in r ? r.trace.status !== 'exact_match' : r.changes.length > 0) ? 1 : 0),
    },
    bytes: {
      // a patch of snapshots is written file by file as it is made, never held whole; exit 1 when it is not empty
      async instead(where, { a, b, patch }, out) {
        const { isRunSpec } = await import('../../trace/diff/compareRuns.js')
        if (!patch || isRunSpec(a)) return null
        const { patchSnapshots } = await import('../../world/diff/patchSnapshots.js')
        let written = false
        for await (const section of patchSnapshots({ ...where, a, b })) {
          written = true
          await out.write(section)
        }
        return written ? 1 : 0
      },
    },
  },
  async run(where, { a, b, patch, window }, { policy, env }) {
    const { diffImagesOrRuns } = await import('../../image/diffImagesOrRuns.js')
    return diffImagesOrRuns({ ...where, a, b, patch: patch ?? false, confine: fileRule(policy), env, ...(window === undefined ? {} : { window }) })
  },
})
