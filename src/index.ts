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
  UnsafeStoreOwnerError,
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
  BranchStateError,
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
  FunctionCandidateError,
  InvalidJobError,
  RequestRefusedError,
  QueueUnreachableError,
  WorkerRegistryError,
  UnsupportedFileError,
  PathLimitError,
  FileWriteError,
  LedgerTamperedError,
  EffectKeyConflictError,
  EffectToolMissingError,
  InputNotFoundError,
  MissingPackageError,
  MalformedTensorFileError,
  MachineError,
  MachineNotFoundError,
  MachineUnavailableError,
  AcceleratorFailedError,
  GuestStoppedError,
  PageScriptError,
  EffectsPolicyError,
} from './errors/index.js'

// workspace and store: every call locates its store with { dir?, store? } (StoreLocator)
export { type Digest } from './objects/digest.js'
export { Store } from './store/Store.js'
export { openStore, type StoreLocator } from './store/findStore.js'
export { allowStoreDirectories } from './store/storeOwner.js'
export { initWorkspace, type InitResult } from './store/initStore.js'
export { snapshotWorkspace, type SnapshotArgs, type SnapshotResult } from './world/scan/snapshotWorkspace.js'
export { status, type StatusResult } from './world/workspace/status.js'
export { log, type LogEntry } from './world/workspace/log.js'
export { diffSnapshots, type SnapshotDiff } from './world/diff/diffSnapshots.js'
export type { Change, ChangeStatus, EntryInfo } from './world/diff/diffTrees.js'
export { checkout, type CheckoutArgs, type CheckoutResult } from './world/checkout/checkout.js'
export { showObject, type ShownObject } from './store/showObject.js'
export { createTag, deleteTag, listTags, type TagInfo } from './store/tags.js'
export { gc, type GcResult } from './store/gc.js'
export { verify, type VerifyResult, type VerifyProblem } from './store/verify.js'
export type { Tree, TreeEntry, FileEntry } from './objects/Tree.js'
export type { Snapshot } from './objects/Snapshot.js'
export type { ScanCounts } from './world/scan/scanWorkspace.js'

// agent images: every layer at once, forked and merged
export { snapshotAgent, type SnapshotAgentArgs, type SnapshotAgentResult } from './image/snapshotAgent.js'
export { checkoutAgent, type CheckoutAgentArgs, type CheckoutAgentResult } from './image/checkoutAgent.js'
export { describeImage, type ImageDescription } from './image/describeImage.js'
export type { EnvChoice } from './image/captureEnv.js'
export { forkImage, type ForkChild, type ForkImageArgs } from './image/forkImage.js'
export { verifyLedgers, type LedgerProblem, type VerifyLedgersResult } from './image/verifyLedgers.js'
export { snapshotForkBranch, type SnapshotForkBranchArgs, type SnapshotForkBranchResult } from './image/snapshotForkBranch.js'
export { mergeImages, type ImageMerge, type LayerReport, type MergeImagesArgs } from './image/mergeImages.js'
export { merge, type MergeArgs, type MergeResult } from './image/merge.js'
export { continueMerge, type ContinueMergeArgs, type ContinueMergeResult } from './image/continueMerge.js'
export { abortMerge } from './image/abortMerge.js'
export { abortCommit } from './branch/commit/abortCommit.js'
// model layer: adapter weights in safetensors, merged with linear / TIES / DARE
export {
  parseSafetensors,
  writeSafetensors,
  decodeFloats,
  encodeFloats,
  type Dtype,
  type FloatDtype,
  type SafetensorsFile,
  type TensorInfo,
  type TensorToWrite,
} from './image/model/safetensors.js'
export { mergeTensor, MODEL_MERGE_METHODS, type ModelMergeMethod, type ModelMergeOptions } from './image/model/mergeTensors.js'
export { exportLoraGguf, type ExportLoraArgs } from './image/model/exportLoraGguf.js'
// KV-cache layer: a llama.cpp sequence's state (node-llama-cpp, an optional peer)
export { snapshotSequence, restoreSequence, prefill, type SnapshotSequenceArgs, type SnapshotSequenceResult, type RestoreSequenceArgs } from './image/cache/sequenceState.js'
export { forkSequence, type ForkSequenceArgs, type ForkSequenceResult, type ForkedContinuation } from './image/cache/forkSequence.js'
export { forkImageCache, type ForkImageCacheArgs, type ForkImageCacheResult } from './image/cache/forkImageCache.js'
export type { KvCacheLayer } from './objects/KvCacheLayer.js'
export type { LlamaModelLike, LlamaSequenceLike } from './image/cache/llamaTypes.js'

// machines: microVMs booted, snapshotted running, forked from warm
export {
  buildMachineImage,
  bootMachine,
  execMachine,
  snapshotMachine,
  commitMachine,
  type MachineCommit,
  forkMachine,
  restoreMachine,
  killMachine,
  removeMachine,
  machineGc,
  type MachineGc,
  listMachines,
  machineStats,
  diffMachines,
  machineDoctor,
  MACHINE_RECIPES,
  type MachineRecipe,
} from './machine/machineApi.js'
export type { MachineBackend, MachineInfo, MachineState, BootOptions, ForkOptions, MachineRef, MachineSnapshot, MachineStats, MachineTtl } from './machine/MachineBackend.js'
export type { MachineNetMode, MachineNetOptions } from './machine/net/machineNet.js'
export { copyToMachine, type MachineCopy } from './machine/copy/copyToMachine.js'
export { machineConsole, CONSOLE_DETACH_KEY, type MachineConsoleOptions } from './machine/qemu/machineConsole.js'
export { copyFromMachine, type CopyFromMachineOptions, DEFAULT_COPY_MAX_BYTES } from './machine/copy/copyFromMachine.js'
export { qemuBackend } from './machine/qemu/qemuBackend.js'
export { evalInMachine, type EvalInMachineOptions, MAX_EVAL_BYTES } from './machine/browser/evalInMachine.js'
export { serveMachineCdp, type MachineCdpOptions, type MachineCdpEndpoint } from './service/machineCdp.js'
export type { ExecResult } from './machine/qemu/GuestChannel.js'
export type { MachineDiff } from './machine/diffMachines.js'
export type { MachineLayer } from './objects/MachineLayer.js'
export type { MachineImage } from './objects/MachineImage.js'
export type { AcceleratorChoice, AcceleratorRequest } from './machine/qemu/accelerator.js'
export type { Accelerator } from './objects/MachineLayer.js'
export type { PathConflict } from './world/merge/mergeWorld.js'
export type { RenameOptions } from './world/diff/findRenames.js'
export { mergeLines, type ConflictLabels, type LineMerge } from './world/merge/mergeLines.js'

// live copy-on-write branches of a workspace, and sandboxed runs
export { Workspace, type OpenWorkspaceOptions } from './branch/Workspace.js'
export { Branch, type BranchOptions } from './branch/Branch.js'
export type { BackendName, BranchChange, BranchInfo, CommitResult, ConflictPolicy } from './branch/types.js'
export type { RunOptions, RunResult } from './branch/run/runInBranch.js'
export type { NetMode } from './sandbox/runSandboxed.js'
export type { SandboxLimits } from './sandbox/limits.js'

// search patterns over branches
export { speculate, type SpeculateOptions, type FanOutOptions } from './patterns/speculate.js'
export { bestOfN, type BestOfNOptions } from './patterns/bestOfN.js'
export { reflexion, defaultCritique, type ReflexionOptions, type Critique } from './patterns/reflexion.js'
export { treeOfThoughts } from './patterns/treeOfThoughts.js'
export { beamSearch, type BeamSearchOptions } from './patterns/beamSearch.js'
export { tournament, type TournamentOptions, type Judge } from './patterns/tournament.js'
export type { TreeSearchOptions, Expand } from './patterns/searchLevels.js'
export type { Evaluate, CandidateRunner } from './patterns/runCandidates.js'
export { queueRunner, type QueueRunnerOptions, type FanoutEvent } from './fanout/queueRunner.js'
export { startWorker, type StartWorkerOptions, type FanoutWorker, type WorkerEvent } from './fanout/startWorker.js'
export type { FanoutJobResult } from './fanout/FanoutJob.js'
export type { CommandValue } from './patterns/runCandidate.js'
export type {
  Candidate,
  CandidateResult,
  CandidateStatus,
  CommandTask,
  Match,
  Outcome,
  Pattern,
  PatternName,
  PatternOptions,
  Target,
  Task,
  TaskContext,
  TaskResult,
} from './patterns/types.js'

// recorded runs: record, replay, diff, the CI gate
export type { Run, Step, StepType, StepError, RunStatus, RedactionMode, JsonValue } from './objects/Run.js'
export type { RedactionRules, RedactionPolicy } from './trace/redact/Redactor.js'
export { Recorder, type RecorderOptions, type RecorderResult } from './trace/record/Recorder.js'
export { recordCommand, type RecordCommandArgs, type RecordResult } from './trace/record/recordCommand.js'
export { replayRun, type ReplayRunArgs, type ReplayResult } from './trace/replay/replayRun.js'
export { listRuns } from './trace/core/listRuns.js'
export type { RunSummary, ListRunsArgs } from './trace/core/RunStore.js'
export { loadRun } from './trace/core/loadRun.js'
export { removeRuns } from './trace/core/removeRuns.js'
export { exportRun } from './trace/core/exportRun.js'
export { compareRuns } from './trace/diff/compareRuns.js'
export { diffRuns, type RunDiff, type DivergenceStatus, type StepSummary } from './trace/diff/diffRuns.js'
export type { DiffOp } from './trace/diff/jsonDiff.js'
export { renderRunDiff } from './trace/diff/renderRunDiff.js'
export { assertNoDiff } from './trace/ci/assertNoDiff.js'
export { ciRecord, type CiRecordArgs } from './trace/ci/ciRecord.js'
export { ciCheck, type CiCheckArgs, type CiCheckResult, type CiOutcome } from './trace/ci/ciCheck.js'
export { ciDiff } from './trace/ci/ciDiff.js'
export { ciNormalize } from './trace/ci/ciNormalize.js'
export { validateArtifact, type ArtifactReport } from './trace/ci/validateArtifact.js'

// side effects: a hash-chained ledger, irreversible calls deferred in speculative branches
export { openEffects, type OpenEffectsArgs } from './effects/openEffects.js'
export type { Effects, EffectsCommitResult } from './effects/Effects.js'
export { verifyLedger, type VerifyLedgerArgs } from './effects/verifyLedger.js'
export { mergeLedgers, type MergeLedgersArgs } from './effects/mergeLedgers.js'
export { isDeferredEffect, type DeferredEffect, type EffectsMode, type ToolOptions } from './effects/types.js'
export type { Ledger, LedgerEntry, EffectClass, EffectStatus } from './objects/Ledger.js'
export type { HttpPolicy, HttpRule } from './effects/httpPolicy.js'
export { commitWithEffects, abortWithEffects, type CommitWithEffectsResult } from './effects/branchEffects.js'
export { withEgressEffects, withHttpEffects, type WithHttpEffectsArgs } from './effects/withHttpEffects.js'
export type { EgressProxy } from './sandbox/runSandboxed.js'
export { listEffects, type ListEffectsArgs, type EffectsListing } from './effects/listEffects.js'
export { sendUnsent, type SendUnsentArgs, type SentEffects } from './effects/sendUnsent.js'
export type { EffectsContext } from './effects/contextLedger.js'

// registries and pack files
export { pushImage, type PushArgs, type PushResult } from './registry/transfer/pushImage.js'
export { pullImage, type PullArgs, type PullResult } from './registry/transfer/pullImage.js'
export { cloneImage, type CloneArgs, type CloneResult } from './registry/transfer/cloneImage.js'
export { packImage, type PackArgs, type PackResult } from './registry/pack/packImage.js'
export { unpackImage, type UnpackArgs, type UnpackResult } from './registry/pack/unpackImage.js'
export type { ConnectOptions } from './registry/transport/openTransport.js'
export type { TransferProgress } from './registry/transport/TransferProgress.js'
