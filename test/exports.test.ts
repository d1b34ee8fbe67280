import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import * as api from '../src/index.js'
import { ROOT } from './helpers/cli.js'

// The public API, name by name: a change here is an API change and shows up in review.
// Adding or removing an export means updating this list in the same commit; after
// `npm run build`, `node -e "import('./dist/index.js').then((m) => console.log(Object.keys(m).sort()))"`
// prints the new list.
it('exports exactly the reviewed public names', () => {
  expect(Object.keys(api).sort()).toEqual([
    'AgentFailedError',
    'AmbiguousIdError',
    'BackendUnavailableError',
    'Branch',
    'BranchBusyError',
    'BranchError',
    'BranchExistsError',
    'BranchNotFoundError',
    'BranchStaleError',
    'ConflictError',
    'CorruptDataError',
    'DecryptionError',
    'DigestMismatchError',
    'DirtyWorkspaceError',
    'EffectKeyConflictError',
    'EffectToolMissingError',
    'EffectsPolicyError',
    'EncryptionKeyError',
    'ExitCode',
    'ForkpointError',
    'InputNotFoundError',
    'InternalError',
    'InvalidImageError',
    'InvalidPackError',
    'JsonTooDeepError',
    'LedgerTamperedError',
    'LockTimeoutError',
    'MODEL_MERGE_METHODS',
    'MalformedObjectError',
    'MalformedTensorFileError',
    'MergeConflictError',
    'ObjectNotFoundError',
    'OfflineViolationError',
    'PathLimitError',
    'PatternCallbackError',
    'PatternCancelledError',
    'PatternError',
    'Recorder',
    'RefConflictError',
    'RegistryAuthError',
    'RegistryRequestError',
    'RemoteImageNotFoundError',
    'RemoteSpecError',
    'ReplayDivergenceError',
    'ReplayNotPossibleError',
    'RunArtifactError',
    'RunNotFoundError',
    'SandboxError',
    'SignatureError',
    'Store',
    'StoreCorruptError',
    'StoreNotFoundError',
    'TargetNotEmptyError',
    'UnsafePathError',
    'UnsupportedFileError',
    'UntrustedCommandError',
    'UsageError',
    'Workspace',
    'abortMerge',
    'abortWithEffects',
    'assertNoDiff',
    'beamSearch',
    'bestOfN',
    'checkout',
    'checkoutAgent',
    'ciCheck',
    'ciDiff',
    'ciNormalize',
    'ciRecord',
    'cloneImage',
    'commitWithEffects',
    'compareRuns',
    'continueMerge',
    'createTag',
    'decodeFloats',
    'defaultCritique',
    'deleteTag',
    'describeImage',
    'diffRuns',
    'diffSnapshots',
    'encodeFloats',
    'exportLoraGguf',
    'exportRun',
    'forkImage',
    'forkImageCache',
    'forkSequence',
    'gc',
    'initWorkspace',
    'isDeferredEffect',
    'isForkpointError',
    'listEffects',
    'listRuns',
    'listTags',
    'loadRun',
    'log',
    'merge',
    'mergeImages',
    'mergeLedgers',
    'mergeLines',
    'mergeTensor',
    'openEffects',
    'openStore',
    'packImage',
    'parseSafetensors',
    'prefill',
    'pullImage',
    'pushImage',
    'recordCommand',
    'reflexion',
    'removeRuns',
    'renderRunDiff',
    'replayRun',
    'restoreSequence',
    'showObject',
    'snapshotAgent',
    'snapshotForkBranch',
    'snapshotSequence',
    'snapshotWorkspace',
    'speculate',
    'status',
    'tournament',
    'treeOfThoughts',
    'unpackImage',
    'validateArtifact',
    'verify',
    'verifyLedger',
    'verifyLedgers',
    'withHttpEffects',
    'writeSafetensors',
  ])
})

// docs/public-api.md lists the public API one line per export (`- \`name\` — ...`): exactly these names, each once.
it('docs/public-api.md names every export once, and nothing else', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'public-api.md'), 'utf8')
  const listed = [...doc.matchAll(/^- `(\w+)` — /gm)].map((m) => m[1])
  expect([...listed].sort()).toEqual(Object.keys(api).sort())
})

// Adapters are subpath exports of the built package, each with its framework an optional peer.
it.each([
  ['forkpoint/ai-sdk', 'ai', 'forkpointMiddleware,recordModel'],
  ['forkpoint/openai-agents', '@openai/agents', 'forkpointTraceProcessor,recordModel,recordingModelProvider'],
  ['forkpoint/langgraph', '@langchain/langgraph-checkpoint', 'ForkpointSaver'],
  ['forkpoint/claude-code', null, 'forkClaudeSession,handleClaudeHook,installClaudeHooks,parseHookEvent,uninstallClaudeHooks'],
] as Array<[string, string | null, string]>)('%s resolves from the built package; its framework (%s) is an optional peer', async (subpath, framework, names) => {
  const { execFile } = await import('node:child_process')
  const { promisify } = await import('node:util')
  const script = `import('${subpath}').then((m) => console.log(Object.keys(m).sort().join(',')))`
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT })
  expect(stdout.trim()).toBe(names)
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { peerDependenciesMeta: Record<string, { optional: boolean }> }
  // Claude Code is a program the hooks are run by, not a package forkpoint imports: no peer
  if (framework !== null) expect(pkg.peerDependenciesMeta[framework]).toEqual({ optional: true })
})
