import { defineConfig } from 'vitest/config'
import { DurationSequencer } from './test/helpers/durationSequencer.js'

/** `dir/NAME.test.ts` for each name. */
const tests = (dir: string, names: string[]): string[] => names.map((name) => `${dir}/${name}.test.ts`)

/**
 * The unit tier (`npm run test:unit`): no services, no root, no CLI processes, no QEMU or browser.
 * test/helpers/unitTierGuard.ts makes a file here fail when it starts a server or one of those processes.
 */
export const UNIT_TESTS = [
  ...tests('test', ['asyncDispose', 'environment', 'layers', 'lint']),
  ...tests('test/tiers', ['buildIfStale', 'unitTier']),
  ...tests('test/adapters', ['aiSdk', 'jsonCodec', 'langgraphValidation', 'openaiAgents']),
  ...tests('test/cli', ['output']),
  ...tests('test/effects', ['effects', 'httpPolicy', 'mergeLedgers', 'verifyLedger']),
  ...tests('test/errors', ['errorData', 'errors']),
  ...tests('test/image', ['imageGraph', 'mergeImages']),
  ...tests('test/image/model', ['mergeTensors', 'safetensors']),
  ...tests('test/operations', ['outputs']),
  ...tests('test/patterns', ['reflexion', 'tournament']),
  ...tests('test/registry', ['defaultTag', 'digestSet', 'hostilePacks', 'pack', 'parseRemote', 'readPackFrames', 'signing']),
  ...tests('test/service', ['contentOperations']),
  ...tests('test/store', ['Store', 'objectGraph', 'refs', 'storeLocator', 'verifyGc']),
  ...tests('test/trace', ['diffRuns']),
  ...tests('test/util', ['isInside']),
  ...tests('test/world', [
    'admitTree',
    'checkout',
    'diffMerge',
    'fastcdc',
    'gitRunPaths',
    'ignoreRules',
    'mergeRenames',
    'mergeWorld',
    'racyClean',
    'restorePaths',
    'showPath',
    'treeBytes',
    'treeLinks',
    'workspaceCommands',
  ]),
]

/**
 * The files that test the workspace scan and its index (src/world/scan/scanWorkspace.ts, workspaceIndex.ts) run again
 * with Node's lstat instead of the compiled one (src/world/scan/lstatNames.ts): the two differ only there, and
 * test/native/ compares them itself. Other workspace tests snapshot too, but only as the way to their subject.
 */
export const NODE_LSTAT_TESTS = tests('test/world', ['admitTree', 'externalSymlinks', 'hostileTrees', 'nonUtf8Names', 'racyClean', 'snapshotWorkspace', 'workspaceIndex'])

export default defineConfig({
  test: {
    // bounds on a hang, not on speed: files run side by side on a busy two-core host
    testTimeout: 180_000,
    hookTimeout: 240_000,
    pool: 'forks',
    // Most files wait (on child processes, QEMU, servers) as much as they compute: vitest's default of
    // cores - 1 runs one file at a time on a 2-core host. Files already run safely side by side (every
    // server on a free port, every write under a directory or key prefix of its own).
    maxWorkers: 3,
    sequence: { sequencer: DurationSequencer },
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT_TESTS, setupFiles: ['test/helpers/unitTierGuard.ts'], isolate: false } },
      {
        extends: true,
        // one registry and one S3 server for the whole run (test/helpers/sharedServices.ts), and machine images
        // built once a run (test/helpers/sharedMachineImages.ts)
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: UNIT_TESTS,
          globalSetup: ['test/helpers/startSharedServices.ts', 'test/helpers/startMachineImages.ts'],
        },
      },
      { extends: true, test: { name: 'node-lstat', include: NODE_LSTAT_TESTS, env: { FORKPOINT_NATIVE: '0' } } },
    ],
  },
})
