/**
 * @module forkpoint — fork() for AI agents. The public API; every CLI command is one of
 * these calls.
 */

// errors
export {
  ExitCode,
  ForkpointError,
  UsageError,
  InternalError,
  CorruptDataError,
  isForkpointError,
  StoreNotFoundError,
  ObjectNotFoundError,
  AmbiguousIdError,
  DigestMismatchError,
  MalformedObjectError,
  UnsafePathError,
  LockTimeoutError,
  RefConflictError,
  StoreCorruptError,
  DirtyWorkspaceError,
  TargetNotEmptyError,
  MergeConflictError,
  RunArtifactError,
  RunNotFoundError,
  ReplayDivergenceError,
  ReplayNotPossibleError,
  OfflineViolationError,
  EncryptionKeyError,
  DecryptionError,
  UntrustedCommandError,
  AgentFailedError,
  JsonTooDeepError,
  BranchError,
  ConflictError,
  BranchStaleError,
  BranchNotFoundError,
  BranchExistsError,
  BranchBusyError,
  BackendUnavailableError,
  SandboxError,
  PatternError,
  PatternCancelledError,
  PatternCallbackError,
  RemoteSpecError,
  RegistryRequestError,
  RegistryAuthError,
  RemoteImageNotFoundError,
  InvalidImageError,
  InvalidPackError,
  SignatureError,
  UnsupportedFileError,
  PathLimitError,
  LedgerTamperedError,
  EffectKeyConflictError,
  EffectToolMissingError,
  EffectsPolicyError,
} from './errors/index.js'
export { InputNotFoundError } from './errors/index.js'

// util
export { canonicalJson, canonicalBytes } from './util/canonicalJson.js'

// store
export { type Digest, isDigest, sha256, shortId } from './store/digest.js'
export { Store } from './store/Store.js'
export type { StructuredObject } from './store/StructuredObject.js'
export { locateStore, openStore, STORE_DIR_NAME, type StoreLocation } from './store/findStore.js'
export { initWorkspace, type InitResult } from './store/initStore.js'
export { readRef, readHead, updateRef, setHead, deleteRef, listRefs, branchRef, tagRef, type Head } from './store/refs.js'
export { readReflog, type ReflogEntry } from './store/reflog.js'
export { resolveId } from './store/resolveId.js'
export { withWriteLock, withGcLock } from './store/storeLock.js'
export { gc, type GcResult } from './store/gc.js'
export { verify, type VerifyResult, type VerifyProblem } from './store/verify.js'
export { walkGraph, childDigests, objectEdges, listObjects } from './store/objectGraph.js'
export { createTag, deleteTag, listTags, type TagInfo } from './store/tags.js'
export { showObject, type ShownObject } from './store/showObject.js'

// world
export { type Tree, type TreeEntry, type FileEntry, type Chunks, makeTree, validateTree } from './world/Tree.js'
export { type Snapshot, makeSnapshot, validateSnapshot, SNAPSHOT_LAYERS } from './world/Snapshot.js'
export { readTree, readSnapshot, readChunks } from './world/readObjects.js'
export { scanWorkspace, type ScanCounts, type ScanOptions, type ScanResult } from './world/scanWorkspace.js'
export { snapshotWorkspace, resolveWorkspace, type SnapshotArgs, type SnapshotResult } from './world/snapshotWorkspace.js'
export { checkout, type CheckoutArgs, type CheckoutResult } from './world/checkout.js'
export { assertLayerKinds, LAYER_KINDS } from './world/layerKinds.js'
export { snapshotAgent, type SnapshotAgentArgs, type SnapshotAgentResult } from './image/snapshotAgent.js'
export { checkoutAgent, type CheckoutAgentArgs, type CheckoutAgentResult } from './image/checkoutAgent.js'
export { describeImage, type ImageDescription } from './image/describeImage.js'
export { readImage } from './image/readImage.js'
export { captureEnv, type EnvChoice } from './image/captureEnv.js'
export { forkImage, type ForkChild } from './image/forkImage.js'
export { mergeBases } from './image/mergeBases.js'
export { mergeImages, type ImageMerge, type LayerReport, type MergeImagesArgs } from './image/mergeImages.js'
export { merge, type MergeArgs, type MergeResult } from './image/merge.js'
export { continueMerge, type ContinueMergeResult } from './image/continueMerge.js'
export { abortMerge } from './image/abortMerge.js'
export { mergeWorld, type PathConflict, type WorldMerge } from './world/mergeWorld.js'
export { mergeLines, type ConflictLabels, type LineMerge } from './world/mergeLines.js'
export { transcriptToRun, transcriptText } from './trace/transcript.js'
export { recoverCheckout } from './world/checkoutJournal.js'
export { workspaceLock, withWorkspaceLock } from './world/workspaceLock.js'
export { materializeTree, writeFileEntry, probeCopyMethod, type CopyMethod, type MaterializeOptions } from './world/materializeTree.js'
export { diffTrees, type Change, type ChangeStatus, type EntryInfo } from './world/diffTrees.js'
export { diffSnapshots, type SnapshotDiff } from './world/diffSnapshots.js'
export { status, type StatusResult } from './world/status.js'
export { log, type LogEntry } from './world/log.js'
export { storeFile, CHUNKING_THRESHOLD, type StoredContent } from './world/storeFile.js'
export { treeSource, zipEntries, sameEntry, EMPTY_TREE, type TreeSource } from './world/treeSource.js'
export { assertNoLinkedAncestor, symlinkStaysInside } from './world/safePath.js'
export { chunkBuffer, chunkStream, DEFAULT_CHUNKING, type ChunkerOptions } from './world/fastcdc.js'

// trace
export { type Run, type Step, type StepType, type StepError, type RunStatus, type RedactionMode, type JsonValue, RUN_SCHEMA_VERSION, makeRunId } from './trace/Run.js'
export { parseRun } from './trace/parseRun.js'
export { runArtifactText } from './trace/runArtifact.js'
export { hashPayload, hashableText, normalizeNfc } from './trace/stepHash.js'
export { Redactor, type RedactionRules, type RedactionPolicy } from './trace/Redactor.js'
export { PayloadCipher } from './trace/payloadCipher.js'
export { Recorder, type RecorderOptions, type RecorderResult } from './trace/Recorder.js'
export { RunStore, type RunSummary, type ListRunsArgs } from './trace/RunStore.js'
export { listRuns } from './trace/listRuns.js'
export { removeRuns } from './trace/removeRuns.js'
export { loadRun } from './trace/loadRun.js'
export { exportRun } from './trace/exportRun.js'
export { recordCommand, type RecordCommandArgs, type RecordResult } from './trace/recordCommand.js'
export { replayRun, type ReplayRunArgs, type ReplayResult } from './trace/replayRun.js'
export { diffRuns, type RunDiff, type DivergenceStatus, type StepSummary, DIVERGENCE_STATUSES } from './trace/diffRuns.js'
export { jsonDiff, type DiffOp } from './trace/jsonDiff.js'
export { renderRunDiff } from './trace/renderRunDiff.js'
export { normalizeRun } from './trace/normalizeRun.js'
export { ciRecord, type CiRecordArgs } from './trace/ciRecord.js'
export { ciCheck, type CiCheckArgs, type CiCheckResult, type CiOutcome } from './trace/ciCheck.js'
export { ciDiff } from './trace/ciDiff.js'
export { ciNormalize } from './trace/ciNormalize.js'
export { validateArtifact, type ArtifactReport } from './trace/validateArtifact.js'
export { assertNoDiff } from './trace/assertNoDiff.js'
export { startRecordingProxy, type RecordingProxy } from './trace/recordingProxy.js'
export { networkNamespaceAvailable } from './trace/spawnAgent.js'
export { compareRuns, isRunSpec } from './trace/compareRuns.js'
// effects
export { openEffects, type OpenEffectsArgs } from './effects/openEffects.js'
export type { Effects, EffectsCommitResult } from './effects/Effects.js'
export { verifyLedger, type VerifyLedgerArgs } from './effects/verifyLedger.js'
export { mergeLedgers, type MergeLedgersArgs } from './effects/mergeLedgers.js'
export { isDeferredEffect, type DeferredEffect, type EffectsMode, type ToolOptions } from './effects/types.js'
export type { Ledger, LedgerEntry, EffectClass, EffectStatus } from './effects/Ledger.js'
export { loadHttpPolicy, parseHttpPolicy, classifyRequest, type HttpPolicy, type HttpRule } from './effects/httpPolicy.js'
export { commitWithEffects, abortWithEffects, type CommitWithEffectsResult } from './effects/branchEffects.js'
export { withHttpEffects, type WithHttpEffectsArgs } from './effects/withHttpEffects.js'
export { runWithEffects } from './effects/runWithEffects.js'
export { listEffects, type ListEffectsArgs, type EffectsListing } from './effects/listEffects.js'
export type { EffectsContext } from './effects/contextLedger.js'
// branch
export { Workspace, type OpenWorkspaceOptions } from './branch/Workspace.js'
export { Branch, type BranchOptions } from './branch/Branch.js'
export type { BackendName, BranchChange, BranchInfo, CommitResult, ConflictPolicy } from './branch/types.js'
export type { RunOptions, RunResult } from './branch/runInBranch.js'
export { cleanupOrphans, type CleanupResult } from './branch/cleanupOrphans.js'
export { makeBranch } from './branch/makeBranch.js'
export { listBranches } from './branch/listBranches.js'
export { commitNamedBranch } from './branch/commitNamedBranch.js'
export { abortNamedBranch } from './branch/abortNamedBranch.js'
export { runCommand } from './branch/runCommand.js'
export type { WorkspaceRef } from './branch/openWorkspace.js'

// sandbox
export { runSandboxed, type SandboxSpec, type SandboxResult, type NetMode } from './sandbox/runSandboxed.js'
export { type SandboxRuntime, nativeRuntime, useSandboxRuntime } from './sandbox/SandboxRuntime.js'
export { parseSize, parseDuration, DEFAULT_TIMEOUT, type SandboxLimits } from './sandbox/limits.js'

// patterns
export { speculate, type SpeculateOptions } from './patterns/speculate.js'
export { bestOfN, type BestOfNOptions } from './patterns/bestOfN.js'
export { reflexion, defaultCritique, type ReflexionOptions, type Critique } from './patterns/reflexion.js'
export { treeOfThoughts } from './patterns/treeOfThoughts.js'
export { beamSearch, type BeamSearchOptions } from './patterns/beamSearch.js'
export { tournament, type TournamentOptions, type Judge } from './patterns/tournament.js'
export type { TreeSearchOptions, Expand } from './patterns/searchLevels.js'
export type { Evaluate } from './patterns/runCandidates.js'
export type { CommandValue } from './patterns/runCandidate.js'
export type { Candidate, CandidateResult, CandidateStatus, CommandTask, Match, Outcome, Pattern, PatternName, PatternOptions, Target, Task, TaskContext, TaskResult } from './patterns/types.js'
export { exploreCommand, type ExploreCommandArgs } from './patterns/exploreCommand.js'
export { speculateCommands, type SpeculateCommandsArgs } from './patterns/speculateCommands.js'
// registry
export { pushImage, type PushArgs, type PushResult } from './registry/pushImage.js'
export { pullImage, type PullArgs, type PullResult } from './registry/pullImage.js'
export { cloneImage, type CloneArgs, type CloneResult } from './registry/cloneImage.js'
export { packImage, type PackArgs, type PackResult } from './registry/packImage.js'
export { unpackImage, type UnpackArgs, type UnpackResult } from './registry/unpackImage.js'
export { parseRemote, type Remote, type Reference } from './registry/parseRemote.js'
export { openTransport, type ConnectOptions } from './registry/openTransport.js'
export type { Transport, BlobStream, FetchedManifest, TransferOptions } from './registry/Transport.js'
export type { Descriptor, BlobRef } from './registry/Descriptor.js'
export type { TransferProgress } from './registry/TransferProgress.js'
export { findCredentials, type Credentials } from './registry/findCredentials.js'
export { signingKeyFromEnv } from './registry/signing.js'
export { MediaType as RegistryMediaType } from './registry/mediaTypes.js'
