import { z } from 'zod'
import { HOST_MOUNT_NEEDS } from '../../branch/backends/hostMountNeeds.js'
import { defineOperation } from '../operation.js'
import { branchInfo, branchName } from '../schemas.js'
import { definedFields } from '../../util/definedFields.js'
import { listLines } from '../text/format.js'

const BRANCH_USAGE = 'branch [name]'

export const branch = defineOperation({
  name: 'branch',
  description: 'Make a copy-on-write branch of the workspace (PARENT/NAME branches a branch): try something there, then commit it or abort it.',
  input: {
    name: branchName,
    backend: z.enum(['overlay', 'reflink', 'copy', 'auto']).optional().describe('how the branch is made (default auto)'),
    path: z.string().min(1).optional().describe('mount the branch at this directory (empty or missing, outside the workspace) instead of inside the store'),
    disk: z
      .string()
      .min(1)
      .optional()
      .describe("cap what the branch writes, e.g. 1G (overlay backend as root; refused elsewhere, exit 2); without it a branch's disk is not capped"),
  },
  local: { fields: ['path', 'disk'], why: "a directory of the caller's machine to mount on, and a filesystem image root makes and loop-mounts" },
  output: branchInfo,
  annotations: { readOnly: false, destructive: false, idempotent: false },
  cli: {
    usage: BRANCH_USAGE,
    rendering: {
      human: (b) => (b.view === 'host' ? b.path : ''),
      // a path only this process's namespace tricks reach would break git, node and editors: offer a shell instead
      notes: (b) =>
        b.view === 'namespace'
          ? [`forkpoint: made branch ${b.name}, but it cannot be mounted where other tools see it here (${HOST_MOUNT_NEEDS}); work in it with 'forkpoint shell ${b.name}'`]
          : [],
    },
  },
  async run(where, { name, backend, path, disk }) {
    const { makeBranch } = await import('../../branch/lifecycle/makeBranch.js')
    return makeBranch({ ...where, name, backend: backend ?? 'auto', ...definedFields({ path, disk }) })
  },
})

export const branchList = defineOperation({
  name: 'branch_list',
  description: 'List the live branches.',
  input: {},
  output: z.object({ branches: z.array(branchInfo) }),
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: {
    usage: BRANCH_USAGE,
    selectedBy: 'list',
    withoutArguments: true,
    rendering: {
      human: (r) =>
        listLines(r.branches, (b) => `${b.name}\t${b.backend}\t${b.view === 'host' ? b.path : `(no path other tools can use: forkpoint shell ${b.name})`}`, 'no branches'),
    },
  },
  async run(where) {
    const { listBranches } = await import('../../branch/lifecycle/listBranches.js')
    return { branches: await listBranches(where) }
  },
})
