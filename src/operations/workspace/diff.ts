import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { confineRunFiles } from '../requestPolicy.js'
import { runDiff, snapshotDiff } from '../schemas.js'

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
  cli: { own: 'diff', why: 'the command line writes a patch to a terminal or a pipe file by file as it is made' },
  async run(where, { a, b, patch, window }, { policy }) {
    if (policy) await confineRunFiles(policy, a, b)
    const { diffImagesOrRuns } = await import('../../image/diffImagesOrRuns.js')
    return diffImagesOrRuns({ ...where, a, b, patch: patch ?? false, ...(window === undefined ? {} : { window }) })
  },
})
